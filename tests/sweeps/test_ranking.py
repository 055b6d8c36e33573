"""One currency per ranking (sweeps.ranking): a sweep over cost.currency ranks its rows' amounts in
USD, each divided by its own plan's exchange rate, never USD and CNY as numbers; a sweep in one
currency ranks as it is. Values by hand."""

import numpy as np
import pytest

from estimator.contract.sweep import Axis
from sweeps import digests
from sweeps.ranking import RANKED_IN, RATE, best_first, rank_key, ranked
from sweeps.summary import merge_digests

CURRENCY = Axis("cost.currency", ("USD", "CNY"))
CAPEX = "cost.capex.total"


def _arrays(owned: list[float], rate: list[float], days: list[float]) -> dict[str, np.ndarray]:
    n = len(owned)
    return {
        digests.DAYS: np.array(days),
        digests.COST_OWNED: np.array(owned),
        digests.COST_CLOUD: np.array(owned) * 2,
        CAPEX: np.array(owned) * 10,
        RATE: np.array(rate),
        digests.FITS: np.ones(n, dtype=bool),
    }


def test_a_cny_row_is_cheaper_than_a_usd_row_of_a_smaller_number():
    # row 0: 100 USD (rate 1); row 1: 700 CNY at 7.2 CNY a USD = 97.22 USD. As numbers 700 > 100; in
    # USD the CNY row is the cheaper, and on the same days it alone is on the Pareto front
    arrays = _arrays([100.0, 700.0], [1.0, 7.2], [10.0, 10.0])
    d = digests.chunk_digest([CURRENCY], 0, arrays)
    assert d["range"][digests.COST_OWNED] == [97.2222, 100.0]  # 700 / 7.2 = 97.2222 (6 significant digits)
    assert d["pareto"][digests.COST_OWNED] == [[1, 10.0, 97.2222]]
    assert d["best"][digests.DAYS][0][digests.COST_OWNED] in (100.0, 700.0)  # rows keep their own amounts
    summary = merge_digests([CURRENCY], [d])
    assert summary[RANKED_IN] == "USD"
    assert [r["index"] for r in summary["best"][digests.COST_OWNED]] == [1, 0]
    assert [r["index"] for r in summary["best"][CAPEX]] == [1, 0]  # 7,000 CNY = 972 USD < 1,000 USD
    assert summary["pareto"][digests.COST_OWNED] == [[1, 10.0, 97.2222]]
    assert [p[2] for p in summary["sample"]] == [100.0, 97.2222]  # the chart draws USD


def test_a_sweep_in_one_currency_ranks_its_amounts_as_they_are():
    # CNY throughout (rate 7.2): 700 CNY then 800 CNY, as numbers, and no RANKED_IN
    arrays = _arrays([800.0, 700.0], [7.2, 7.2], [10.0, 12.0])
    d = digests.chunk_digest([Axis("cluster.cards", (512, 1024))], 0, arrays)
    assert d["range"][digests.COST_OWNED] == [700.0, 800.0]
    summary = merge_digests([Axis("cluster.cards", (512, 1024))], [d])
    assert RANKED_IN not in summary
    assert [r["index"] for r in summary["best"][digests.COST_OWNED]] == [1, 0]


def test_merged_chunks_rank_by_usd_across_chunks():
    # chunk 0 holds the USD row (500 USD), chunk 1 the CNY row (3,000 CNY at 7.0 = 428.57 USD)
    first = digests.chunk_digest([CURRENCY], 0, _arrays([500.0], [1.0], [5.0]))
    second = digests.chunk_digest([CURRENCY], 1, _arrays([3000.0], [7.0], [6.0]))
    summary = merge_digests([CURRENCY], [first, second])
    assert [r["index"] for r in summary["best"][digests.COST_OWNED]] == [1, 0]
    # 5 days for 500 USD and 6 days for 428.57 USD: both on the front
    assert summary["pareto"][digests.COST_OWNED] == [[0, 5.0, 500.0], [1, 6.0, 428.571]]


def test_rank_keys_and_values():
    row = {"index": 3, digests.COST_OWNED: 720.0, RATE: 7.2}
    assert rank_key(row, digests.COST_OWNED, True) == pytest.approx(100.0)
    assert rank_key(row, digests.COST_OWNED, False) == 720.0
    assert rank_key(row, digests.DAYS, True) == float("inf")  # no days stored
    assert rank_key({**row, digests.DAYS: 4.0}, digests.DAYS, True) == 4.0  # days are no money
    other = {"index": 1, digests.COST_OWNED: 150.0, RATE: 1.0}
    assert [r["index"] for r in best_first([other, row], digests.COST_OWNED, True)] == [3, 1]
    arrays = _arrays([720.0], [7.2], [1.0])
    assert ranked(arrays, CAPEX, True) == pytest.approx([1000.0])
    assert ranked(arrays, CAPEX, False) == pytest.approx([7200.0])
