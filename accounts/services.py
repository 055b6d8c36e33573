"""Writes of API tokens: issue, revoke, and the check of a presented token (with its last use)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from . import keys
from .models import ApiToken
from .selectors import active_tokens_of

# last_used_at is rewritten at most this often, so a busy script costs no write per request
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


class InvalidTokenError(Exception):
    """A presented token that does not authenticate; `reason` is "unknown", "revoked", "expired"
    or "inactive" (the user's account is disabled)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def issue_token(*, user, name: str, expires_at: dt.datetime | None = None) -> tuple[ApiToken, str]:
    """A new token for `user` and its secret, which exists only in the return value: show it once.

    Raises ValidationError (code "limit") past settings.API_TOKENS_MAX_PER_USER live tokens, and
    (code "duplicate", on the name) when a live token of the user already has this name."""
    name = name.strip()
    secret = keys.new_secret()
    try:
        with transaction.atomic():
            # one issue at a time per user, so two concurrent requests cannot both pass the cap
            list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk"))
            limit = settings.API_TOKENS_MAX_PER_USER
            if active_tokens_of(user=user).count() >= limit:
                raise ValidationError(
                    _(
                        "You already have the most active tokens allowed (%(limit)d). Revoke one you no longer use."
                    ),
                    code="limit",
                    params={"limit": limit},
                )
            if ApiToken.objects.filter(user=user, name=name, revoked_at__isnull=True).exists():
                raise ValidationError({"name": ValidationError(_duplicate(name), code="duplicate")})
            token = ApiToken.objects.create(
                user=user,
                name=name,
                prefix=keys.prefix_of(secret),
                key_hash=keys.digest(secret),
                expires_at=expires_at,
            )
    except IntegrityError as exc:  # a concurrent issue with the same name won the race
        raise ValidationError({"name": ValidationError(_duplicate(name), code="duplicate")}) from exc
    return token, secret


def _duplicate(name: str) -> str:
    return str(_("You already have a token named “%(name)s”; revoke it or choose another name.")) % {
        "name": name
    }


def revoke_token(*, token: ApiToken) -> ApiToken:
    """Revoked at once: the next request with it answers 401. Revoking twice keeps the first time."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=token.revoked_at)
    return token


def check_token(*, secret: str) -> ApiToken:
    """The live token whose secret this is (its user loaded); raises InvalidTokenError otherwise."""
    if not secret or len(secret) > keys.MAX_TOKEN_CHARS:
        raise InvalidTokenError("unknown")
    found = None
    # the prefix narrows the search to a row or two; the digest decides, in constant time
    for candidate in ApiToken.objects.select_related("user").filter(prefix=keys.prefix_of(secret)):
        if keys.matches(secret, candidate.key_hash):
            found = candidate
    if found is None:
        raise InvalidTokenError("unknown")
    now = timezone.now()
    if found.revoked_at is not None:
        raise InvalidTokenError("revoked")
    if found.is_expired(now):
        raise InvalidTokenError("expired")
    if not found.user.is_active:
        raise InvalidTokenError("inactive")
    _mark_used(found, now)
    return found


def _mark_used(token: ApiToken, now: dt.datetime) -> None:
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        token.last_used_at = now
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
