"""Who sees what: the one place for team visibility and team roles.

An object with an owner and a team (an estimate, a sweep) is visible to its owner and to every
member of its team; it may be deleted (or cancelled) by its owner or an admin of its team. Anyone
else gets 404 from the callers, so existence is not disclosed.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from estimator.errors import ScenarioError

from .models import Membership, Team


def _signed_in(user) -> bool:
    return bool(user is not None and user.is_authenticated)


def teams_of(*, user) -> QuerySet[Team]:
    """The teams the user is a member of (none for an anonymous user)."""
    if not _signed_in(user):
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user)


def memberships_of(*, user) -> QuerySet[Membership]:
    if not _signed_in(user):
        return Membership.objects.none()
    return Membership.objects.filter(user=user).select_related("team").order_by("team__name", "team_id")


def visible_to(*, user) -> Q:
    """Filter for objects with `owner` and `team` fields that `user` may see."""
    return Q(owner=user) | Q(team__in=teams_of(user=user).values("id"))


def is_member(*, user, team_id: int | None) -> bool:
    return (
        team_id is not None
        and _signed_in(user)
        and Membership.objects.filter(user=user, team_id=team_id).exists()
    )


def is_admin(*, user, team_id: int | None) -> bool:
    return (
        team_id is not None
        and _signed_in(user)
        and Membership.objects.filter(user=user, team_id=team_id, role=Membership.Role.ADMIN).exists()
    )


def may_manage(*, user, obj) -> bool:
    """Delete or cancel: the owner, or an admin of the object's team."""
    if not _signed_in(user):
        return False
    return obj.owner_id == user.pk or is_admin(user=user, team_id=obj.team_id)


def team_for(*, user, slug: str | None, field: str = "team") -> Team | None:
    """The team a new estimate or sweep goes to: the one named by `slug` (the user must be a
    member: else a ScenarioError on `field`); "" for none (private); None for the default: the
    user's only team. With several teams and no choice it stays private: sharing is never a guess."""
    if not _signed_in(user):
        if slug:
            raise ScenarioError(_("sign in to file an estimate under a team"), field)
        return None
    if slug:
        team = teams_of(user=user).filter(slug=slug).first()
        if team is None:
            raise ScenarioError(_("you are not a member of a team '%(slug)s'") % {"slug": slug[:50]}, field)
        return team
    if slug == "":
        return None
    mine = list(teams_of(user=user)[:2])
    return mine[0] if len(mine) == 1 else None


def team_of(*, user, slug: str) -> Team:
    """One of the user's teams by slug; Team.DoesNotExist for any other (the callers answer 404)."""
    return teams_of(user=user).get(slug=slug)


def members_of(*, team: Team) -> QuerySet[Membership]:
    return Membership.objects.filter(team=team).select_related("user").order_by("user__username")


def membership_in(*, team: Team, username: str) -> Membership:
    """A member of the team by username; Membership.DoesNotExist otherwise."""
    return members_of(team=team).get(user__username=username)
