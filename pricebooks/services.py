"""Writes on price books and the resolution of a scenario's `cost.price_book` for a user.

The prices document is validated by the core (estimator.contract.price_book); this module adds who may use
which book and the versioning: a new version for every edit, numbered 1, 2, ... per book.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils.text import slugify
from django.utils.translation import gettext as _

from estimator.contract.price_book import parse_prices, parse_reference
from estimator.errors import ScenarioError
from teams.models import Team

from .models import PriceBook, PriceBookVersion
from .selectors import books_of


def validated_prices(*, data: Any, field: str = "prices") -> dict[str, Any]:
    """The prices document as stored: validated by the core, defaults left out."""
    return parse_prices(data, field).model_dump(mode="json", exclude_defaults=True)


def _slug_for(team: Team, name: str, slug: str | None) -> str:
    if slug:
        if PriceBook.objects.filter(team=team, slug=slug).exists():
            raise ScenarioError(
                _("team '%(team)s' already has a price book '%(slug)s'") % {"team": team.slug, "slug": slug},
                "slug",
            )
        return slug
    base = slugify(name)[:40] or "book"
    candidate, n = base, 1
    while PriceBook.objects.filter(team=team, slug=candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


@transaction.atomic
def create_book(
    *,
    user,
    team: Team,
    name: str,
    currency: str,
    price_date: datetime.date,
    prices: Any,
    slug: str | None = None,
) -> PriceBook:
    """A new book of `team` with its version 1."""
    table = validated_prices(data=prices)
    book = PriceBook.objects.create(team=team, name=name, slug=_slug_for(team, name, slug))
    PriceBookVersion.objects.create(
        book=book, number=1, created_by=user, currency=currency, price_date=price_date, prices=table
    )
    return book


@transaction.atomic
def add_version(
    *, user, book: PriceBook, currency: str, price_date: datetime.date, prices: Any, name: str | None = None
) -> PriceBookVersion:
    """Edit a book: a new version numbered after the last; earlier versions stay as they were."""
    table = validated_prices(data=prices)
    PriceBook.objects.select_for_update().filter(pk=book.pk).first()  # serialize concurrent edits
    _rename(book, name)
    last = book.versions.aggregate(n=Max("number"))["n"] or 0
    return PriceBookVersion.objects.create(
        book=book, number=last + 1, created_by=user, currency=currency, price_date=price_date, prices=table
    )


def _rename(book: PriceBook, name: str | None) -> None:
    if name and name != book.name:
        PriceBook.objects.filter(pk=book.pk).update(name=name)
        book.name = name


@transaction.atomic
def update_book(
    *, user, book: PriceBook, currency: str, price_date: datetime.date, prices: Any, name: str | None = None
) -> tuple[PriceBookVersion, bool]:
    """PUT: the book's content becomes this. A new version only when the currency, the price date
    or the prices differ from the latest (compared as validated documents, so key order and
    defaults written out do not count); returns (the latest version, whether it was filed now)."""
    table = validated_prices(data=prices)
    PriceBook.objects.select_for_update().filter(pk=book.pk).first()  # serialize concurrent edits
    latest = book.versions.order_by("-number").first()
    if latest is not None and (latest.currency, latest.price_date, latest.prices) == (
        currency,
        price_date,
        table,
    ):
        _rename(book, name)
        return latest, False
    return add_version(
        user=user, book=book, currency=currency, price_date=price_date, prices=prices, name=name
    ), True


def resolve_reference(*, user, ref: str, field: str = "cost.price_book") -> PriceBookVersion:
    """The version a reference names, among the books of the user's teams; a ScenarioError on
    `field` for anything else (a book of another team is 'not found', as if it did not exist)."""
    try:
        team_slug, book_slug, number = parse_reference(ref)
    except ScenarioError as exc:
        raise ScenarioError(dataclasses.replace(exc.errors[0], field=field)) from None  # code kept
    book = books_of(user=user).filter(team__slug=team_slug, slug=book_slug).first()
    if book is None:
        raise ScenarioError(
            _("no price book '%(ref)s' among your teams' books") % {"ref": f"{team_slug}/{book_slug}"}, field
        )
    versions = book.versions.select_related("book")
    version = versions.filter(number=number).first() if number else versions.order_by("-number").first()
    if version is None:
        raise ScenarioError(
            _("price book '%(ref)s' has no version %(n)s") % {"ref": book.reference, "n": number}, field
        )
    return version


def book_documents(*, user, refs: dict[str, str]) -> dict[str, tuple[PriceBookVersion, dict[str, Any]]]:
    """{reference: (version, book document)} for the references a request uses ({ref: field path})."""
    out = {}
    errors = []
    for ref, field in refs.items():
        try:
            version = resolve_reference(user=user, ref=ref, field=field)
        except ScenarioError as exc:
            errors.extend(exc.errors)
            continue
        out[ref] = (version, version.document())
    if errors:
        raise ScenarioError(errors)
    return out
