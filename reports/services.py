"""Writes and computations on estimates. Views and API call these; these call the core."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from estimator import ENGINE_VERSION, catalog
from estimator.contract.price_book import PriceBook, parse_book
from estimator.errors import ScenarioError
from estimator.jsonio import to_jsonable
from estimator.plan.compose import estimate as core_estimate
from estimator.plan.work_budget import check_work_budget
from pricebooks.models import PriceBookVersion
from pricebooks.selectors import newer_version
from pricebooks.services import book_documents
from teams.selectors import team_for

from . import summary
from .models import Estimate

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def core_errors(*, what: str = "scenario", verb: str = "plan") -> Iterator[None]:
    """Around a call of the core on a client's input: ScenarioError passes; any other failure is
    logged as a bug and reported as a ScenarioError too, so no body a client sends gives a 500."""
    try:
        yield
    except ScenarioError:
        raise
    except RecursionError:
        raise ScenarioError(f"the {what} is nested too deeply") from None
    except Exception as exc:  # a bug in the core must not become a 500 for the client
        logger.exception("the estimator failed on a %s it accepted", what)
        raise ScenarioError(
            f"the estimator could not {verb} this {what} ({type(exc).__name__}); please report it with the {what}"
        ) from exc


def run_estimate(*, data: Any, books: dict[str, PriceBook] | None = None) -> dict:
    """The core's answer for one scenario dict, as strict JSON.

    Raises ScenarioError for input the core rejects (and for its bugs: core_errors).
    """
    with core_errors():
        check_work_budget(data, books)  # estimator.limits: an over-budget search is refused before it runs
        out = core_estimate(data, books)
    return to_jsonable(out)


def book_reference(*, data: Any) -> str | None:
    """The scenario's `cost.price_book` when it is a string (any other shape: the core says why)."""
    cost = data.get("cost") if isinstance(data, dict) else None
    ref = cost.get("price_book") if isinstance(cost, dict) else None
    return ref if isinstance(ref, str) else None


def resolve_book(*, user, data: Any) -> tuple[PriceBookVersion | None, dict[str, Any] | None]:
    """The price-book version the scenario names, among the user's teams' books, and its document;
    (None, None) without one. ScenarioError on cost.price_book for a book the user cannot use."""
    ref = book_reference(data=data)
    if ref is None:
        return None, None
    version, document = book_documents(user=user, refs={ref: "cost.price_book"})[ref]
    return version, document


def books_for(*, data: Any, document: dict[str, Any] | None) -> dict[str, PriceBook] | None:
    """The core's `books` argument: the stored or resolved book under the scenario's reference."""
    ref = book_reference(data=data)
    if ref is None or document is None:
        return None
    return {ref: parse_book(document)}


def prepare_estimate(
    *, data: Any, owner=None, team: str | None = None, price_books: dict[str, Any] | None = None
) -> Estimate:
    """Plan `data`: the estimate, not saved yet. The scenario as submitted, the normalized scenario,
    the result and versions; the team named by slug `team` (the owner must be a member), by
    default the owner's only team; a price book the scenario names is resolved among the owner's
    teams' books and its prices are kept with the estimate. `price_books` ({reference: book
    document}, as a sweep stores them) are used instead of resolving, for a row of a sweep.

    No transaction here: planning takes a while, and on SQLite a write transaction locks the whole
    database, so the caller saves in a short one (create_estimate, or a batch item's)."""
    user = owner if owner is not None and owner.is_authenticated else None
    chosen_team = team_for(user=user, slug=team)
    ref = book_reference(data=data)
    if price_books is not None and ref in price_books:
        version, document = None, price_books[ref]
    else:
        version, document = resolve_book(user=user, data=data)
    out = run_estimate(data=data, books=books_for(data=data, document=document))
    scenario = out["scenario"]
    return Estimate(
        owner=user,
        team=chosen_team,
        price_book_version=version,
        price_book=document,
        name=(scenario.get("name") or "")[:200],
        input=without_ignored_fields(data=to_jsonable(data), result=out["result"]),
        scenario=scenario,
        result=out["result"],
        engine_version=str(out.get("engine_version", "")),
        catalog_version=str(out.get("catalog_version", "")),
    )


def without_ignored_fields(*, data: Any, result: dict[str, Any]) -> Any:
    """The submitted scenario without the config.json fields the core ignored (result.model.
    ignored_fields): they are never stored, so a pasted config.json costs only what is read."""
    ignored = (result.get("model") or {}).get("ignored_fields") or []
    if ignored and isinstance(data, dict) and isinstance(data.get("model"), dict):
        data = {**data, "model": {k: v for k, v in data["model"].items() if k not in set(ignored)}}
    return data


def create_estimate(
    *, data: Any, owner=None, team: str | None = None, price_books: dict[str, Any] | None = None
) -> Estimate:
    """Plan `data` and store it (prepare_estimate, then one INSERT)."""
    estimate = prepare_estimate(data=data, owner=owner, team=team, price_books=price_books)
    estimate.save(force_insert=True)
    return estimate


def delete_estimate(*, estimate: Estimate) -> None:
    estimate.delete()


def engine_versions() -> dict[str, str]:
    """Today's engine and catalog versions (what a recompute runs; CHANGELOG.md explains each)."""
    return {"engine_version": ENGINE_VERSION, "catalog_version": catalog.CATALOG_VERSION}


def newer_book(*, estimate: Estimate) -> dict[str, Any] | None:
    """When the estimate's price book has a version newer than the one it used: {name, version,
    price_date, currency} of the latest (recompute keeps the stored version and says so)."""
    latest = newer_version(version=estimate.price_book_version)
    if latest is None:
        return None
    return {
        "name": latest.book.name,
        "version": latest.number,
        "price_date": latest.price_date.isoformat(),
        "currency": latest.currency,
    }


def recompute(*, estimate: Estimate) -> dict:
    """Plan the estimate's input again with today's engine and catalog (nothing is stored) and say
    what changed. A price book is the version the estimate stored (its prices as stored, so a share
    link shows nothing of the book's later versions); `newer_book` says when the book has moved on.
    Returns {"scenario", "result", "engine_version", "catalog_version", "rows", "error", "newer_book"}."""
    newer = newer_book(estimate=estimate)
    try:
        out = run_estimate(
            data=estimate.input, books=books_for(data=estimate.input, document=estimate.price_book)
        )
    except ScenarioError as exc:
        # Today's catalog may no longer know an id the stored scenario used.
        return {"error": exc.to_dict()["errors"], "rows": [], "newer_book": newer, **engine_versions()}
    return {**out, "rows": summary.diff(estimate.result, out["result"]), "error": None, "newer_book": newer}
