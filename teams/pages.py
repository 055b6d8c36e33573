"""Browser pages of teams: your teams and a new one (/teams/), one team with its members
(/teams/<slug>/), where its admins add a member by username or email, change a role or remove a
member. Signed-in only; a team you are not in answers 404. Plain forms, no JavaScript needed."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from api.field_text import field_text
from estimator.errors import ScenarioError

from . import services
from .forms import MemberForm, RoleForm, TeamForm
from .models import Membership, Team
from .selectors import is_admin, members_of, membership_in, memberships_of, team_of


def _team(request, slug: str) -> Team:
    try:
        return team_of(user=request.user, slug=slug)
    except Team.DoesNotExist:
        raise Http404 from None


@login_required
@require_http_methods(["GET", "POST"])
def index(request):
    form = TeamForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                team = services.create_team(
                    user=request.user, name=form.cleaned_data["name"], slug=form.cleaned_data["slug"] or None
                )
            except ScenarioError as exc:
                form.add_core_errors(exc)
            else:
                messages.info(request, _("Team created: %(name)s. You are its admin.") % {"name": team.name})
                return redirect("teams_pages:detail", slug=team.slug)
        status = 400
    context = {"memberships": memberships_of(user=request.user), "form": form}
    return render(request, "teams/index.html", context, status=status)


def _detail(request, team: Team, member_form: MemberForm | None = None, status: int = 200):
    admin = is_admin(user=request.user, team_id=team.pk)
    context = {
        "team": team,
        "members": members_of(team=team),
        "admin": admin,
        "member_form": (member_form or MemberForm()) if admin else None,
        "roles": Membership.Role.choices,
    }
    return render(request, "teams/detail.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def detail(request, slug: str):
    """The team and its members; POST (admins): add a member."""
    team = _team(request, slug)
    if request.method == "GET":
        return _detail(request, team)
    form = MemberForm(request.POST)
    if form.is_valid():
        try:
            membership = services.add_member(
                by=request.user, team=team, who=form.cleaned_data["user"], role=form.cleaned_data["role"]
            )
        except services.NotAdminError:
            raise Http404 from None  # the form is not shown to members; nothing to say
        except ScenarioError as exc:
            form.add_core_errors(exc)
        else:
            messages.info(request, _("%(user)s added.") % {"user": membership.user.get_username()})
            return redirect("teams_pages:detail", slug=team.slug)
    return _detail(request, team, form, status=400)


def _membership(request, slug: str, username: str) -> Membership:
    try:
        return membership_in(team=_team(request, slug), username=username)
    except Membership.DoesNotExist:
        raise Http404 from None


def _refused(request, exc: ScenarioError) -> None:
    for entry in exc.errors:
        messages.error(request, field_text(entry))


@login_required
@require_POST
def role(request, slug: str, username: str):
    membership = _membership(request, slug, username)
    form = RoleForm(request.POST)
    if form.is_valid():
        try:
            services.set_role(by=request.user, membership=membership, role=form.cleaned_data["role"])
        except services.NotAdminError:
            raise Http404 from None
        except ScenarioError as exc:
            _refused(request, exc)
        else:
            messages.info(
                request,
                _("%(user)s is now %(role)s.") % {"user": username, "role": membership.get_role_display()},
            )
    return redirect("teams_pages:detail", slug=slug)


@login_required
@require_POST
def remove(request, slug: str, username: str):
    membership = _membership(request, slug, username)
    try:
        services.remove_member(by=request.user, membership=membership)
    except services.NotAdminError:
        raise Http404 from None
    except ScenarioError as exc:
        _refused(request, exc)
    else:
        messages.info(request, _("%(user)s removed from the team.") % {"user": username})
    return redirect("teams_pages:detail", slug=slug)
