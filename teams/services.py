"""Writes on teams and memberships, for the API and the pages alike (keyword-only).

- Any signed-in user may create a team; its creator is its first admin. A user may be admin of at
  most MAX_ADMIN_TEAMS teams (creation is cheap, so it is bounded).
- Only a team's admins add members (by username or email address), change roles and remove
  members; a team always keeps at least one admin (the last one cannot be demoted or removed).

Messages are in the request's language (web layer). Refusals: `ScenarioError` on the field at fault (400, or a form error), `NotAdminError` when the user
is a member but not an admin (403). A team the user is not in is "not found" for the callers
(selectors.team_of), so its existence is not disclosed.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils.text import slugify
from django.utils.translation import gettext as _

from estimator.errors import ScenarioError

from .models import Membership, Team
from .selectors import is_admin

MAX_ADMIN_TEAMS = 50
ROLES = tuple(Membership.Role.values)


class NotAdminError(Exception):
    """The user is in the team but not one of its admins."""


def _require_admin(user, team: Team) -> None:
    if not is_admin(user=user, team_id=team.pk):
        raise NotAdminError(_("only an admin of the team may change its members"))


def _free_slug(name: str, slug: str | None) -> str:
    if slug:
        if Team.objects.filter(slug=slug).exists():
            raise ScenarioError(
                _("the short name '%(slug)s' is taken; choose another") % {"slug": slug}, "slug"
            )
        return slug
    base = slugify(name)[:40] or "team"
    candidate, n = base, 1
    while Team.objects.filter(slug=candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


@transaction.atomic
def create_team(*, user, name: str, slug: str | None = None) -> Team:
    """A new team with `user` as its admin."""
    name = name.strip()
    if not name:
        raise ScenarioError(_("a team needs a name"), "name")
    admin_of = Membership.objects.filter(user=user, role=Membership.Role.ADMIN).count()
    if admin_of >= MAX_ADMIN_TEAMS:
        raise ScenarioError(_("you are already an admin of %(n)s teams") % {"n": MAX_ADMIN_TEAMS}, "name")
    try:
        with transaction.atomic():
            team = Team.objects.create(name=name, slug=_free_slug(name, slug))
    except IntegrityError:  # the same slug taken between the check and the insert
        raise ScenarioError(
            _("the short name '%(slug)s' is taken; choose another") % {"slug": slug}, "slug"
        ) from None
    Membership.objects.create(user=user, team=team, role=Membership.Role.ADMIN)
    return team


def find_user(*, who: str, field: str = "user"):
    """The active account named by a username or an email address (case-insensitive email);
    an address two accounts share is refused rather than guessed."""
    who = who.strip()
    users = get_user_model().objects.filter(is_active=True)
    found = list(users.filter(Q(username=who) | Q(email__iexact=who) if "@" in who else Q(username=who))[:2])
    if len(found) == 1:
        return found[0]
    if not found:
        raise ScenarioError(_("no account with the username or email '%(who)s'") % {"who": who[:100]}, field)
    raise ScenarioError(
        _("several accounts have the email '%(who)s'; give the username") % {"who": who[:100]}, field
    )


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ScenarioError(_("must be one of %(roles)s") % {"roles": ", ".join(ROLES)}, "role")


@transaction.atomic
def add_member(*, by, team: Team, who: str, role: str = Membership.Role.MEMBER) -> Membership:
    """Add the account `who` (username or email) to `team` with `role`."""
    _require_admin(by, team)
    _check_role(role)
    user = find_user(who=who)
    if Membership.objects.filter(team=team, user=user).exists():
        raise ScenarioError(
            _("'%(user)s' is already a member of %(team)s")
            % {"user": user.get_username(), "team": team.slug},
            "user",
        )
    return Membership.objects.create(team=team, user=user, role=role)


def _keeps_an_admin(team: Team, leaving: Membership) -> None:
    others = Membership.objects.filter(team=team, role=Membership.Role.ADMIN).exclude(pk=leaving.pk)
    if leaving.role == Membership.Role.ADMIN and not others.exists():
        raise ScenarioError(_("a team keeps at least one admin: make another member admin first"), "role")


@transaction.atomic
def set_role(*, by, membership: Membership, role: str) -> Membership:
    _require_admin(by, membership.team)
    _check_role(role)
    Team.objects.select_for_update().filter(pk=membership.team_id).first()  # one role change at a time
    if role != Membership.Role.ADMIN:
        _keeps_an_admin(membership.team, membership)
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def remove_member(*, by, membership: Membership) -> None:
    _require_admin(by, membership.team)
    Team.objects.select_for_update().filter(pk=membership.team_id).first()
    _keeps_an_admin(membership.team, membership)
    membership.delete()
