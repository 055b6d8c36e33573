"""Price books: a named, dated set of prices that replaces the catalog's published prices.

The catalog's prices are the default book. A book lists only what it changes: per catalog id the
purchase price of an accelerator card, a server chassis (without its cards: a node costs chassis
+ cards per node x card price, as in the catalog), a switch, a transceiver or a drive; per
accelerator the cloud rates per card-hour (on demand, reserved); and electricity per kWh. Ids the
book does not name keep the catalog's price. Explicit scenario fields (`cost.server_price`,
`cost.switch_price`, `cost.transceiver_price`, `cost.electricity_per_kwh`, the cloud prices,
`hardware.overrides.price_usd`) still win over the book.

The scenario names a book by reference (`cost.price_book`, "<team>/<book>[@<version>]"); the
caller (the web layer, or the CLI's --price-book file) supplies `PriceBook` documents keyed by
reference, and `estimator.contract.resolve.resolve` applies the named one
(`estimator.contract.book_pricing`). Book prices are in the book's `currency`; a CNY book is
converted with the scenario's `cost.usd_to_cny` (catalog default when absent), the same rate the
report converts back with, so a CNY report shows the book's figures.

This module is the book document only (pydantic models and their parsing): a plan without a book
never imports it (issue 27, cold start); applying a book is `book_pricing`, pydantic-free.
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel as _Base
from pydantic import BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from estimator import catalog
from estimator.contract.fields import PRICE_BOOK_REFERENCE, _code, _message, _number, _path
from estimator.errors import FieldError, ScenarioError, not_an_object
from estimator.jsonio import check_tree

Money = Annotated[float, BeforeValidator(_number), Field(ge=0, le=1e10)]
Rate = Annotated[float, BeforeValidator(_number), Field(ge=0, le=1e5)]
MAX_ENTRIES = 500  # per kind: far above the catalog's size, bounds the work of a hostile document

KINDS = ("accelerators", "servers", "switches", "transceivers", "drives")


class _Frozen(_Base):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


class CloudRates(_Frozen):
    on_demand: Rate | None = Field(None, description="Cloud on-demand price per card-hour")
    reserved: Rate | None = Field(None, description="Cloud reserved price per card-hour")


def entries(kind: str) -> dict[str, Any]:
    """The catalog entries a book may price under `kind` (cloud rates are per accelerator)."""
    if kind in ("accelerators", "cloud"):
        return dict(catalog.accelerators())
    if kind == "servers":
        return dict(catalog.servers())
    if kind == "switches":
        return dict(catalog.switches())
    if kind == "transceivers":
        return dict(catalog.transceivers())
    return dict(catalog.drives())


def _known(kind: str) -> set[str]:
    return set(entries(kind))


class PriceTable(_Frozen):
    """The prices document of a book version (every price in the book's currency)."""

    accelerators: dict[str, Money] = Field(
        default_factory=dict, max_length=MAX_ENTRIES, description="Price per card, by accelerator id"
    )
    servers: dict[str, Money] = Field(
        default_factory=dict,
        max_length=MAX_ENTRIES,
        description="Server chassis price without its accelerator cards, by server id",
    )
    switches: dict[str, Money] = Field(default_factory=dict, max_length=MAX_ENTRIES)
    transceivers: dict[str, Money] = Field(default_factory=dict, max_length=MAX_ENTRIES)
    drives: dict[str, Money] = Field(default_factory=dict, max_length=MAX_ENTRIES)
    cloud: dict[str, CloudRates] = Field(
        default_factory=dict,
        max_length=MAX_ENTRIES,
        description="Cloud rates per card-hour, by accelerator id",
    )
    electricity_per_kwh: Annotated[float, BeforeValidator(_number), Field(ge=0, le=100)] | None = None

    @model_validator(mode="after")
    def _catalog_ids(self) -> PriceTable:
        """Every id must be a catalog id: a typo would otherwise silently price nothing."""
        for kind in (*KINDS, "cloud"):
            unknown = sorted(set(getattr(self, kind)) - _known(kind))
            if unknown:  # the first one (by kind, then id): its code names kind and id
                raise PydanticCustomError(
                    "unknown_catalog_id", "{kind}: unknown id '{id}'", {"kind": kind, "id": unknown[0]}
                )
        return self


class PriceBook(_Frozen):
    """One version of a book as the core applies it: its label and its prices."""

    name: str = Field("price book", min_length=1, max_length=200)
    version: int = Field(1, ge=1, le=10**9)
    currency: Literal["USD", "CNY"] = "USD"
    price_date: datetime.date
    prices: PriceTable = Field(default_factory=PriceTable)

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"


_M = TypeVar("_M", bound=_Frozen)


def _errors(exc: ValidationError, prefix: str) -> ScenarioError:
    errors = []
    for err in exc.errors():
        loc = err["loc"]
        # a failing model validator reports at the object (its name left out of the path)
        field = _path(tuple(p for p in loc if p != "function-after[_catalog_ids()]"))
        msg = _message(err)
        code, params = _code(err, msg)
        if err.get("type") == "extra_forbidden":
            msg, code = "is not a field of a price book", "not-a-price-book-field"
        elif err.get("type") == "unknown_catalog_id":  # at the id itself: prices.<kind>.<id>
            code, params = "unknown-catalog-id", dict(err.get("ctx") or {})
            field = ".".join(p for p in (field, params.get("kind"), params.get("id")) if p)
        errors.append(FieldError(".".join(p for p in (prefix, field) if p), msg, code, params))
    return ScenarioError(errors)


def _parsed(model: type[_M], data: Any, prefix: str, not_an_object_message: str) -> _M:
    """`data` as `model`: a JSON object (check_tree's limits), its errors under `prefix`."""
    if not isinstance(data, dict):
        raise not_an_object(not_an_object_message, prefix)
    check_tree(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _errors(exc, prefix) from None


def parse_prices(data: Any, prefix: str = "prices") -> PriceTable:
    """Validate a prices document; errors name the path under `prefix` (e.g. prices.switches.x)."""
    return _parsed(PriceTable, data, prefix, "must be a JSON object")


def parse_book(data: Any, prefix: str = "") -> PriceBook:
    """Validate a whole book document (name, version, currency, price_date, prices)."""
    return _parsed(PriceBook, data, prefix, "a price book must be a JSON object")


def parse_reference(ref: str) -> tuple[str, str, int | None]:
    """ "team/book@3" -> ("team", "book", 3); the version is None when not pinned."""
    match = re.fullmatch(PRICE_BOOK_REFERENCE, ref)
    if match is None:
        message = "must be '<team>/<book>' or '<team>/<book>@<version>' (lowercase slugs)"
        raise ScenarioError(FieldError("cost.price_book", message, "must-be-book-reference"))
    team, rest = ref.split("/", 1)
    book, _, version = rest.partition("@")
    return team, book, int(version) if version else None
