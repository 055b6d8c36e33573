"""The remembered answers of the layout search (layout.batch_search): the best layout of every
problem searched (best_layouts, best_in) and whether any layout fits (any_fits), keyed by every
field of the LayoutProblem (the answer is a pure function of them), the oldest forgotten beyond
ANSWER_CACHE. A scenario planned again (a report, its stack sensitivity, a sweep row) costs no
search."""

from __future__ import annotations

from typing import Any

from estimator.layout.problem import LayoutProblem
from estimator.layout.search import LayoutEval

ANSWER_CACHE = 20_000  # answers remembered per kind, for sweeps (a best layout: a few kB)
Key = tuple[Any, ...]
answers: dict[Key, LayoutEval | None] = {}  # best layouts
fits: dict[Key, bool] = {}  # any_fits' answers (sweeps)


def problem_key(p: LayoutProblem) -> Key:
    """Every field of the problem, hashable (the fixed fields as sorted pairs)."""
    return tuple(
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


def _bound(store: dict[Key, Any]) -> None:
    while len(store) > ANSWER_CACHE:
        store.pop(next(iter(store)))


def clear() -> None:
    """Forget every answer."""
    answers.clear()
    fits.clear()
