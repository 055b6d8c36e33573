"""Reads of price books: a book is visible to the members of its team, to nobody else (404)."""

from __future__ import annotations

from django.db.models import QuerySet

from teams.selectors import teams_of

from .models import PriceBook, PriceBookVersion


def books_of(*, user) -> QuerySet[PriceBook]:
    return PriceBook.objects.filter(team__in=teams_of(user=user).values("id")).select_related("team")


def visible_book(*, user, pk) -> PriceBook:
    """Raises PriceBook.DoesNotExist for a book of a team the user is not in."""
    if not 0 < int(pk) < 2**63:
        raise PriceBook.DoesNotExist
    return books_of(user=user).get(pk=pk)


def newer_version(*, version: PriceBookVersion | None) -> PriceBookVersion | None:
    """The book's latest version when it is newer than `version` (the recompute notice)."""
    if version is None:
        return None
    latest = version.book.latest()
    return latest if latest is not None and latest.number > version.number else None
