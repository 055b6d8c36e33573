"""The remembered answers of the layout search: the best layout of every problem searched by
layout.batch_search (best_layouts, best_in), whether any layout fits (any_fits) and the whole
search of a plan's chosen size (searched: layout.search.search), keyed by every field of the
LayoutProblem (the answer is a pure function of them), the oldest forgotten beyond ANSWER_CACHE
(SEARCH_CACHE for whole searches). A scenario planned again (a report, its stack sensitivity, a
sweep row, the same POST) costs no search."""

from __future__ import annotations

from typing import Any

from estimator.layout import search as layout_search
from estimator.layout.problem import LayoutProblem
from estimator.layout.search import LayoutEval, LayoutSearch

ANSWER_CACHE = 20_000  # answers remembered per kind, for sweeps (a best layout: a few kB)


class Key(tuple[Any, ...]):
    """A problem's key (a tuple of its fields) that hashes them once: a key is looked up several
    times per search (asked, remembered, answered) and its fields hold the model, accelerator and
    stack dataclasses, whose hashes Python recomputes field by field each time."""

    def __hash__(self) -> int:
        found: int | None = self.__dict__.get("hash")
        if found is None:
            found = self.__dict__["hash"] = tuple.__hash__(self)
        return found


answers: dict[Key, LayoutEval | None] = {}  # best layouts
fits: dict[Key, bool] = {}  # any_fits' answers (sweeps)
SEARCH_CACHE = 256  # whole searches remembered (a plan's chosen size: a few best layouts each)
searches: dict[tuple[Any, ...], LayoutSearch] = {}


def problem_key(p: LayoutProblem) -> Key:
    """Every field of the problem, hashable (the fixed fields as sorted pairs)."""
    return Key(
        tuple(sorted(p.fixed.items())) if f == "fixed" else getattr(p, f) for f in p.__dataclass_fields__
    )


def remember(key: Key, best: LayoutEval | None) -> None:
    """Keep a best layout, the oldest forgotten beyond ANSWER_CACHE."""
    answers[key] = best
    _bound(answers)


def remember_fit(key: Key, ok: bool) -> None:
    """Keep an any_fits answer, the oldest forgotten beyond ANSWER_CACHE."""
    fits[key] = ok
    _bound(fits)


def searched(problem: LayoutProblem) -> LayoutSearch:
    """search(problem), remembered unless it ran out of time (then it depends on the clock); the
    search's budget and chunk are part of the key, as a search under another budget may stop."""
    key = (problem_key(problem), layout_search.SEARCH_SECONDS, layout_search.SEARCH_CHUNK)
    found = searches.get(key)
    if found is None:
        found = layout_search.search(problem)
        if not found.timed_out:
            searches[key] = found
            _bound(searches, SEARCH_CACHE)
    return found


def _bound(store: dict[Any, Any], limit: int = ANSWER_CACHE) -> None:
    while len(store) > limit:
        store.pop(next(iter(store)))


def clear() -> None:
    """Forget every answer."""
    answers.clear()
    fits.clear()
    searches.clear()
