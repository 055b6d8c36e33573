"""The form that names a new API token and picks its lifetime."""

from __future__ import annotations

import datetime as dt

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .models import NAME_MAX_CHARS

# days; "" is no expiry. A short default: a forgotten token stops working by itself.
EXPIRY_CHOICES = [
    ("30", _("30 days")),
    ("90", _("90 days")),
    ("365", _("1 year")),
    ("", _("Never")),
]
DEFAULT_EXPIRY = "90"


class TokenForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=NAME_MAX_CHARS,
        help_text=_("What the token is for, e.g. “quoting system (production)”."),
    )
    expires = forms.ChoiceField(
        label=_("Expires after"), choices=EXPIRY_CHOICES, initial=DEFAULT_EXPIRY, required=False
    )

    def expires_at(self) -> dt.datetime | None:
        days = self.cleaned_data.get("expires") or ""
        return timezone.now() + dt.timedelta(days=int(days)) if days else None
