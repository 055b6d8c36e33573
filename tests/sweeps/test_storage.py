"""Chunk storage (sweeps.digests.pack / unpack): the encodings give back the same arrays bit for
bit, chunks stored before them still read, and the pivoted Pareto front is pareto_front's."""

import io
import math
import zipfile

import numpy as np
import pytest

from estimator.contract import sweep as estimator_sweep
from sweeps import digests


def columns() -> dict[str, np.ndarray]:
    """Six rows of the kinds the core returns: varying, constant (NaN, -0.0), text, flags, messages
    and the reason's code, cards and refused group's errors (row 1: a group the core refuses)."""
    return {
        "compute.wall_clock_days": np.array([3.5, 2.0, np.nan, 7.25, 1.0, 2.0]),
        "compute.training_flop": np.full(6, 6.3e23),
        "parallelism.tp": np.full(6, np.nan),
        "cost.capex.storage": np.full(6, -0.0),
        "parallelism.recompute": np.array(["selective"] * 6),
        "stack.id": np.array(["megatron-h100", "mindspeed-910b", "megatron-h100"] * 2, dtype="<U40"),
        "ok": np.array([True, False, False, True, True, True]),
        "error": np.array([None, TP_EN, NO_LAYOUT_EN, None, None, None], dtype=object),
        "reason_code": np.array(["", "fixed-tp-heads", "no-feasible-layout", "", "", ""], dtype="<U40"),
        "reason_cards": np.array([np.nan, np.nan, 8.0, np.nan, np.nan, np.nan]),
        "reason_errors": np.array([None, TP_ERRORS, None, None, None, None], dtype=object),
    }


NO_LAYOUT_EN = "no plan: no parallel layout passes the rules and fits in HBM on these cards"
TP_EN = "parallelism.tp: must divide the 32 attention heads"
TP_ERRORS = (
    '[{"code": "fixed-tp-heads", "field": "parallelism.tp", "message": "must divide the 32 attention '
    'heads", "params": {"heads": 32}}]'
)


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert list(got) == list(want)
    for key, value in want.items():
        assert got[key].dtype == value.dtype and got[key].shape == value.shape, key
        if value.dtype == object:
            assert got[key].tolist() == value.tolist(), key
        else:  # bit for bit: NaN where NaN was, -0.0 stays -0.0
            assert got[key].tobytes() == value.tobytes(), key


def test_pack_then_unpack_gives_the_same_arrays():
    arrays = columns()
    assert_same(digests.unpack(digests.pack(arrays)), arrays)


def test_a_chunk_stored_before_the_reason_codes_reads_with_the_code_of_its_sentence():
    """Rows stored with the English sentence alone (before plan.batch_reasons): the sentence's code,
    no cards, no group errors; a sentence that is no batch reason (a group's refusal, its own words)
    has no code."""
    old = {k: v for k, v in columns().items() if not k.startswith("reason_")}
    old["error"] = np.array([None, "model.preset: unknown", NO_LAYOUT_EN, None, None, None], dtype=object)
    got = digests.unpack(digests.pack(old))
    assert got["reason_code"].tolist() == ["", "", "no-feasible-layout", "", "", ""]
    assert np.isnan(got["reason_cards"]).all() and got["error"].tolist() == old["error"].tolist()
    assert got["reason_errors"].tolist() == [None] * 6


def test_a_chunk_stored_before_the_group_errors_reads_without_them():
    """Rows stored with the reason's code and cards but not a refused group's errors (engine 2.76.0):
    as stored, no errors (the page then shows the group's English sentence)."""
    old = {k: v for k, v in columns().items() if k != "reason_errors"}
    got = digests.unpack(digests.pack(old))
    assert got["reason_code"].tolist() == old["reason_code"].tolist()
    assert got["reason_errors"].dtype == object and got["reason_errors"].tolist() == [None] * 6


def test_a_refused_groups_errors_are_stored_once_per_distinct_text():
    with zipfile.ZipFile(io.BytesIO(digests.pack(columns()))) as zf:
        names = set(zf.namelist())
    assert {"_texts.reason_errors.npy", "_text_values.reason_errors.npy"} <= names
    with np.load(io.BytesIO(digests.pack(columns()))) as npz:
        assert npz["_texts.reason_errors"].tolist() == [-1, 0, -1, -1, -1, -1]
        assert npz["_text_values.reason_errors"].tolist() == [TP_ERRORS]


def test_constant_and_text_columns_are_stored_encoded():
    with zipfile.ZipFile(io.BytesIO(digests.pack(columns()))) as zf:
        names = set(zf.namelist())
    assert {"_const.compute.training_flop.npy", "_const.parallelism.tp.npy", "ok.npy"} <= names
    assert "_const.cost.capex.storage.npy" in names
    assert {"_codes.stack.id.npy", "_values.stack.id.npy", "_codes.parallelism.recompute.npy"} <= names
    assert "compute.wall_clock_days.npy" in names  # a varying number column is stored as it is
    assert not {"stack.id.npy", "compute.training_flop.npy"} & names


def test_columns_of_long_runs_are_stored_as_runs():
    """5,000 rows: a figure of the slow axis (runs of 100; the second run equal to the first, so
    one run of 200, then a run of -0.0, which is not a run of 0.0), a flag with one run of False in
    the middle, and a figure of the fast axis (a value per row), which is stored as it is."""
    slow = np.repeat(np.arange(50.0) * 1.5, 100)
    slow[100:200] = 0.0
    slow[200:300] = -0.0
    flag = np.ones(5000, dtype=bool)
    flag[2000:2600] = False
    fast = np.arange(5000.0) / 7
    arrays = {"slow": slow, "flag": flag, "fast": fast}
    blob = digests.pack(arrays)
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        names = set(zf.namelist())
    assert {"_starts.slow.npy", "_runs.slow.npy", "_starts.flag.npy", "fast.npy"} <= names
    assert_same(digests.unpack(blob), arrays)
    with np.load(io.BytesIO(blob)) as npz:
        assert npz["_starts.flag"].tolist() == [0, 2000, 2600]
        assert npz["_runs.flag"].tolist() == [True, False, True]
        assert npz["_starts.slow"][:3].tolist() == [0, 200, 300] and npz["_starts.slow"].size == 49
        assert np.signbit(npz["_runs.slow"][:2]).tolist() == [False, True]


def test_a_column_of_zeros_and_negative_zeros_is_not_constant():
    """Same value, different bits: stored as is, each sign kept."""
    arrays = {"x": np.array([0.0, -0.0, 0.0])}
    with zipfile.ZipFile(io.BytesIO(digests.pack(arrays))) as zf:
        assert "x.npy" in zf.namelist()
    assert np.signbit(digests.unpack(digests.pack(arrays))["x"]).tolist() == [False, True, False]


def test_text_columns_with_many_values_are_stored_as_they_are(monkeypatch):
    monkeypatch.setattr(digests, "TEXT_CODES_MAX", 2)
    arrays = {"stack.id": np.array(["a", "b", "c", "a"])}
    with zipfile.ZipFile(io.BytesIO(digests.pack(arrays))) as zf:
        assert "stack.id.npy" in zf.namelist()
    assert_same(digests.unpack(digests.pack(arrays)), arrays)


def test_every_column_constant_keeps_the_row_count():
    arrays = {"ok": np.ones(4, dtype=bool), "compute.cards": np.full(4, 64.0)}
    got = digests.unpack(digests.pack(arrays))
    assert got["ok"].tolist() == [True] * 4 and got["compute.cards"].tolist() == [64.0] * 4


def test_chunks_stored_before_the_encodings_still_read():
    """The earlier layout: every column as is, the messages as codes plus a message list, last."""
    old = {
        "compute.wall_clock_days": np.array([3.5, np.nan]),
        "stack.id": np.array(["megatron-h100", "megatron-h100"], dtype="<U40"),
        "ok": np.array([True, False]),
        "_error_code": np.array([-1, 0], dtype=np.int32),
        "_error_messages": np.array(["does not fit"]),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **old)
    got = digests.unpack(buf.getvalue())
    # then the reason's code and cards, which such a chunk has not stored ("does not fit" is no
    # batch reason: no code)
    assert list(got) == [
        "compute.wall_clock_days",
        "stack.id",
        "ok",
        "error",
        "reason_code",
        "reason_cards",
        "reason_errors",
    ]
    assert got["reason_code"].tolist() == ["", ""] and got["reason_errors"].tolist() == [None, None]
    assert got["stack.id"].tolist() == ["megatron-h100"] * 2 and got["ok"].tolist() == [True, False]
    assert got["error"].tolist() == [None, "does not fit"]
    assert got["compute.wall_clock_days"][0] == 3.5 and math.isnan(got["compute.wall_clock_days"][1])


def test_pivoted_front_by_hand():
    """The points (x, 10 - x) for x = 0..9, one point (4, 5) under that line and 4,989 points above
    it: the front is the line with (4, 5) in place of (4, 6) and without (5, 5), which (4, 5)
    dominates (equal y, larger x)."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 10, 5000).astype(float)
    y = 10 - x + rng.integers(1, 5, 5000)
    x[:10], y[:10] = np.arange(10.0), 10 - np.arange(10.0)
    x[10], y[10] = 4.0, 5.0
    front = digests.pareto(x, y)
    expected = [(0, 10), (1, 9), (2, 8), (3, 7), (4, 5), (6, 4), (7, 3), (8, 2), (9, 1)]
    assert [(x[i], y[i]) for i in front] == expected
    assert front[4] == 10


@pytest.mark.parametrize("kind", ["uniform", "ties", "duplicates", "nan-and-inf", "anti-correlated"])
def test_pivoted_front_equals_pareto_front(kind):
    """The same indices in the same order as the full sort, ties (first index kept) included."""
    rng = np.random.default_rng(11)
    for n in (4096, 20000, 50000):
        if kind == "uniform":
            x, y = rng.random(n), rng.random(n)
        elif kind == "ties":
            x, y = rng.integers(0, 20, n).astype(float), rng.integers(0, 20, n).astype(float)
        elif kind == "duplicates":
            x, y = np.full(n, 2.0), np.full(n, 3.0)
            y[rng.integers(0, n, 4)] = 1.0
        elif kind == "nan-and-inf":
            x, y = rng.integers(0, 6, n).astype(float), rng.random(n)
            x[rng.random(n) < 0.3], y[rng.random(n) < 0.1] = np.nan, np.inf
        else:
            x = rng.random(n)
            y = 1.0 - x
        assert digests.pareto(x, y).tolist() == estimator_sweep.pareto_front(x, y).tolist()


def test_pivoted_front_of_no_finite_point_is_empty():
    x = np.full(5000, np.nan)
    assert digests.pareto(x, np.ones(5000)).size == 0
