"""Applying a price book (estimator.contract.price_book) to the catalog's entries: the book's price
replaces an entry's when the book names its id, converted to USD, and the entry's source then
cites the book. Pure functions of a validated `PriceBook`; no pydantic here, so a plan that names
no book imports none of the book document's models (issue 27, cold start).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from estimator.catalog.entries import Source
from estimator.errors import ScenarioError

if TYPE_CHECKING:  # annotations only: the models are imported where a book is validated
    from estimator.contract.price_book import PriceBook


def pick(ref: str | None, books: Mapping[str, PriceBook] | None) -> PriceBook | None:
    """The book a scenario's `cost.price_book` names, from what the caller supplied."""
    if ref is None:
        return None
    book = (books or {}).get(ref)
    if book is None:
        raise ScenarioError(
            f"price book '{ref}' was not supplied (the web product resolves it among your teams' "
            "books; the CLI takes it with --price-book FILE)",
            "cost.price_book",
        )
    return book


def usd_per_unit(book: PriceBook, usd_to_cny: float) -> float:
    """USD per unit of the book's currency: the one conversion of book prices into the core's USD."""
    return 1.0 if book.currency == "USD" else 1.0 / usd_to_cny


T = TypeVar("T")


_SOURCE_PREFIX = "price book "


def _source(book: PriceBook) -> Source:
    return Source(source=f"{_SOURCE_PREFIX}{book.label}", as_of=book.price_date.isoformat())


def source_text(book: PriceBook) -> str:
    """How a report cites a price the book set: "price book <name> v<N> (<date>)"."""
    return f"{_SOURCE_PREFIX}{book.label} ({book.price_date.isoformat()})"


def book_note(entry: Any, field: str = "price_usd") -> str:
    """ ", price book <label>" when the entry's `field` came from a price book, else ""."""
    src = getattr(entry, "sources", {}).get(field)
    return f", {src.source}" if src is not None and src.source.startswith(_SOURCE_PREFIX) else ""


def priced(entry: T, kind: str, book: PriceBook | None, usd_to_cny: float, field: str = "price_usd") -> T:
    """A catalog entry with its `field` price from the book when the book names its id."""
    if book is None:
        return entry
    table: dict[str, float] = getattr(book.prices, kind)
    entry_id = getattr(entry, "id", None)
    if entry_id not in table:
        return entry
    sources = {**getattr(entry, "sources", {}), field: _source(book)}
    value = table[entry_id] * usd_per_unit(book, usd_to_cny)
    return dataclasses.replace(entry, **{field: value, "sources": sources})  # type: ignore[type-var]


def priced_cloud(entry: T, book: PriceBook | None, usd_to_cny: float) -> T:
    """An accelerator with the book's cloud rates (on demand, reserved) where the book gives them."""
    if book is None:
        return entry
    rates = book.prices.cloud.get(getattr(entry, "id", ""))
    if rates is None:
        return entry
    fx = usd_per_unit(book, usd_to_cny)
    changes: dict[str, Any] = {}
    sources = dict(getattr(entry, "sources", {}))
    if rates.on_demand is not None:
        changes["cloud_price_usd_per_card_hour"] = rates.on_demand * fx
        sources["cloud_price_usd_per_card_hour"] = _source(book)
    if rates.reserved is not None:
        changes["cloud_reserved_usd_per_card_hour"] = rates.reserved * fx
        sources["cloud_reserved_usd_per_card_hour"] = _source(book)
    if not changes:
        return entry
    return dataclasses.replace(entry, **changes, sources=sources)  # type: ignore[type-var]


def electricity_usd(book: PriceBook | None, usd_to_cny: float) -> float | None:
    """The book's electricity price in USD per kWh, or None when it gives none."""
    if book is None or book.prices.electricity_per_kwh is None:
        return None
    return book.prices.electricity_per_kwh * usd_per_unit(book, usd_to_cny)


def assumption(book: PriceBook) -> dict[str, Any]:
    """The report's assumption row naming the book ("Price book: name vN (date, currency)")."""
    return {
        "name": "price book",
        "value": book.version,
        "unit": "",
        "source": f"{book.label} ({book.price_date.isoformat()}, {book.currency})",
        "code": "assumption.price-book",
        "params": {
            "book": book.name,
            "version": book.version,
            "date": book.price_date.isoformat(),
            "currency": book.currency,
        },
    }
