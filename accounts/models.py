"""Named API tokens: a user's own credentials for scripts, stored hashed (accounts.keys)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

NAME_MAX_CHARS = 100


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens", verbose_name=_("user")
    )
    name = models.CharField(_("name"), max_length=NAME_MAX_CHARS)
    prefix = models.CharField(_("prefix"), max_length=16, db_index=True, editable=False)
    key_hash = models.CharField(_("SHA-256 of the token"), max_length=64, unique=True, editable=False)
    # a default, not auto_now_add: the import of older tokens keeps their creation time
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        constraints = [
            # names tell a user's live tokens apart; a revoked token's name may be used again
            models.UniqueConstraint(
                fields=["user", "name"],
                condition=Q(revoked_at__isnull=True),
                name="api_token_name_unique_live",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def is_expired(self, now: dt.datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    def is_active(self, now: dt.datetime | None = None) -> bool:
        return self.revoked_at is None and not self.is_expired(now)
