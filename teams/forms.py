"""Forms of the team pages: a new team, a new member, a role."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from api.field_text import field_text
from estimator.errors import ScenarioError

from .models import Membership


class _CoreErrors(forms.Form):
    def add_core_errors(self, exc: ScenarioError) -> None:
        """A refusal of teams.services shown on its field (or on the form)."""
        for entry in exc.errors:
            self.add_error(entry.field if entry.field in self.fields else None, field_text(entry))


class TeamForm(_CoreErrors):
    name = forms.CharField(label=_("Team name"), max_length=100)
    slug = forms.SlugField(
        label=_("Short name"),
        max_length=50,
        required=False,
        help_text=_(
            "Lowercase letters, digits, hyphens; used in price-book references. Default: from the name."
        ),
    )


class MemberForm(_CoreErrors):
    user = forms.CharField(label=_("Username or email"), max_length=254)
    role = forms.ChoiceField(label=_("Role"), choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class RoleForm(_CoreErrors):
    role = forms.ChoiceField(label=_("Role"), choices=Membership.Role.choices)
