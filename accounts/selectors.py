"""Reads of API tokens: a user sees only their own; anyone else's answers as if it did not exist."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.utils import timezone

from .models import ApiToken


def tokens_of(*, user) -> QuerySet[ApiToken]:
    """The user's tokens, live, expired and revoked, newest first (none for an anonymous user)."""
    if not user or not user.is_authenticated:
        return ApiToken.objects.none()
    return ApiToken.objects.filter(user=user)


def active_tokens_of(*, user) -> QuerySet[ApiToken]:
    """The user's tokens that still authenticate: not revoked, not expired."""
    return (
        tokens_of(user=user)
        .filter(revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    )


def owned_token(*, user, pk) -> ApiToken:
    """The user's token `pk`; raises ApiToken.DoesNotExist for anyone else's, so existence is not disclosed."""
    if not 0 < int(pk) < 2**63:  # beyond a bigint the database would raise instead of finding nothing
        raise ApiToken.DoesNotExist
    return tokens_of(user=user).get(pk=pk)
