"""Reads of estimates. Owner-only lists and lookups; public lookup by share token only."""

from __future__ import annotations

from django.db.models import QuerySet

from teams.selectors import visible_to

from .models import Estimate


def estimates_of(*, user) -> QuerySet[Estimate]:
    """The user's own estimates and those of the user's teams, newest first (none for an anonymous user)."""
    if not user or not user.is_authenticated:
        return Estimate.objects.none()
    return Estimate.objects.filter(visible_to(user=user)).select_related("team", "owner")


def owned_estimate(*, user, pk) -> Estimate:
    """The user's (or the user's teams') estimate `pk`; raises Estimate.DoesNotExist for anyone
    else's, so existence is not disclosed."""
    if not 0 < int(pk) < 2**63:  # beyond a bigint the database would raise instead of finding nothing
        raise Estimate.DoesNotExist
    return estimates_of(user=user).get(pk=pk)


def shared_estimate(*, token: str) -> Estimate:
    """The estimate behind a share token; raises Estimate.DoesNotExist."""
    if not token or len(token) > 64:
        raise Estimate.DoesNotExist
    return Estimate.objects.get(share_token=token)
