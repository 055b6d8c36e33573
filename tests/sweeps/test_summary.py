"""The sweep summary folded from its chunks' digests one at a time (sweeps.summary): the fronts,
best rows, ranges, counts and heatmap cells of the whole sweep, values by hand, whether the fold
cuts its candidates back after every digest or only at the end; and a chunk's refusal counts."""

import numpy as np
import pytest

from estimator.contract.sweep import Axis
from estimator.plan.batch_reasons import REASON_CODE_FIELD
from sweeps import summary as summary_module
from sweeps.digests import COST_OWNED, DAYS, ERROR, FITS, chunk_digest
from sweeps.summary import merge_digests

CARDS = Axis("cluster.cards", (512, 1024))


def _digest(**parts) -> dict:
    return {"n": 0, "feasible": 0, "best": {}, "range": {}, "pareto": {}, "heat": {}, "errors": {}, **parts}


@pytest.fixture(params=["cut after every digest", "cut at the end"], autouse=True)
def cuts(request, monkeypatch):
    if request.param == "cut after every digest":
        monkeypatch.setattr(summary_module, "FRONT_KEPT", 1)
        monkeypatch.setattr(summary_module, "ROWS_KEPT", 1)


def _once(items):
    """The digests as a generator: the fold reads them once, in order."""
    yield from items


def test_the_front_of_three_chunks():
    # chunk 0: (1, 9), (2, 5); chunk 1: (2, 5) again, (3, 6) dominated by (2, 5), (4, 1);
    # chunk 2: (0.5, 9.5), and a point without a cost (ignored). Front by x: (0.5, 9.5), (1, 9),
    # (2, 5) of chunk 0 (the tie keeps the first chunk's scenario 1, not 5), (4, 1)
    chunks = [
        _digest(pareto={COST_OWNED: [[0, 1.0, 9.0], [1, 2.0, 5.0]]}),
        _digest(pareto={COST_OWNED: [[5, 2.0, 5.0], [6, 3.0, 6.0], [7, 4.0, 1.0]]}),
        _digest(pareto={COST_OWNED: [[10, 0.5, 9.5], [11, 1.0, None]]}),
    ]
    front = merge_digests([CARDS], _once(chunks))["pareto"][COST_OWNED]
    assert front == [[10, 0.5, 9.5], [0, 1.0, 9.0], [1, 2.0, 5.0], [7, 4.0, 1.0]]


def test_the_best_rows_of_three_chunks(monkeypatch):
    monkeypatch.setattr(summary_module, "BEST_K", 2)
    # 5, 3 | 3, 4 | 1 days: the two best are scenario 4 (1 day) and scenario 1 (3 days, before
    # scenario 2's 3 days by index)
    chunks = [
        _digest(best={DAYS: [{"index": 0, DAYS: 5.0}, {"index": 1, DAYS: 3.0}]}, range={DAYS: [3.0, 5.0]}),
        _digest(best={DAYS: [{"index": 2, DAYS: 3.0}, {"index": 3, DAYS: 4.0}]}, range={DAYS: [3.0, 4.0]}),
        _digest(best={DAYS: [{"index": 4, DAYS: 1.0}]}, range={DAYS: [1.0, 1.0]}),
    ]
    merged = merge_digests([CARDS], _once(chunks))
    assert [r["index"] for r in merged["best"][DAYS]] == [4, 1]
    assert merged["range"][DAYS] == [1.0, 5.0]


def test_counts_errors_and_heat_cells_of_three_chunks():
    # the strip of the one axis cluster.cards (2 cells, one per card count): 512 cards' lowest is
    # 3.0 (chunk 1), 1,024 cards' 5.0 (chunk 0)
    key = f"0|-1|{DAYS}"
    chunks = [
        _digest(
            n=4, feasible=3, errors={"too big": 1}, error_codes={"too big": "c1"}, heat={key: [None, 5.0]}
        ),
        _digest(n=4, feasible=2, errors={"too big": 1, "no price": 1}, heat={key: [3.0, None]}),
        _digest(n=2, feasible=2, errors={}, heat={key: [4.0, 6.0]}),
    ]
    merged = merge_digests([CARDS], _once(chunks))
    assert (merged["scenarios"], merged["feasible"]) == (10, 7)
    assert merged["errors"] == {"too big": 2, "no price": 1}
    assert merged["error_codes"] == {"too big": "c1"}  # "no price" came from a chunk without codes
    assert merged["heat"] == [{"x": None, "y": "cluster.cards", "metric": DAYS, "z": [[3.0], [5.0]]}]


def test_a_chunk_digest_counts_its_refusal_messages():
    # 3 rows "b", 2 "a", 1 "c", 2 planned (no message); 12 more messages once each: the 10 commonest
    # kept, each with the reason code of its first row ("b": row 0's "kb", "a": row 2's "ka")
    messages = ["b", None, "a", "b", "c", "a", "b", None, *(f"m{i:02d}" for i in range(12))]
    reasons = ["kb", "", "ka", "kx", "kc", "ky", "kz", "", *("km" for _ in range(12))]
    axes = [Axis("cluster.cards", tuple(range(len(messages))))]
    arrays = {
        FITS: np.array([m is None for m in messages]),
        ERROR: np.array(messages, dtype=object),
        REASON_CODE_FIELD: np.array(reasons),
    }
    digest = chunk_digest(axes, 0, arrays)
    assert list(digest["errors"].items())[:3] == [("b", 3), ("a", 2), ("c", 1)]
    assert len(digest["errors"]) == 10 and set(digest["errors"].values()) == {3, 2, 1}
    assert [digest["error_codes"][m] for m in ("b", "a", "c")] == ["kb", "ka", "kc"]
    arrays[ERROR][:] = None
    assert chunk_digest(axes, 0, arrays)["errors"] == {}
