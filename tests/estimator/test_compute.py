"""estimator.model.compute: 6·N·D, time, cards for a deadline (the source article's corrected example)."""

import numpy as np
import pytest

from estimator.model import compute


def test_70b_500b_tokens_example():
    # 70B dense, 5e11 tokens, 320 TFLOP/s at 50% MFU (source article section 6, corrected)
    flop = compute.training_flop(6 * 70e9, 5e11)
    assert flop == pytest.approx(2.1e23)
    one_card_s = compute.training_time_s(flop, 1, 320e12, 0.5)
    assert one_card_s == pytest.approx(1.3125e9)
    assert one_card_s / compute.SECONDS_PER_YEAR == pytest.approx(41.6, abs=0.05)
    thirty_days = 30 * compute.SECONDS_PER_DAY
    assert compute.cards_exact(flop, thirty_days, 320e12, 0.5) == pytest.approx(506.4, abs=0.05)
    assert compute.cards_for_deadline(flop, thirty_days, 320e12, 0.5, cards_per_node=1) == 507
    assert compute.cards_for_deadline(flop, thirty_days, 320e12, 0.5, cards_per_node=8) == 512


def test_exact_node_multiple_is_not_rounded_up():
    flop = 512 * 100.0 * 1e12 * 0.5
    assert compute.cards_for_deadline(flop, 100.0, 1e12, 0.5, cards_per_node=8) == 512


def test_hours_and_throughput():
    assert compute.accelerator_hours(512, 7200) == pytest.approx(1024)
    tps = compute.tokens_per_s(512, 320e12, 0.5, 6 * 70e9)
    assert tps == pytest.approx(512 * 160e12 / 4.2e11)
    assert compute.mfu_from_throughput(tps, 6 * 70e9, 512, 320e12) == pytest.approx(0.5)


def test_functions_broadcast_over_arrays():
    mfu = np.array([0.3, 0.4, 0.5])
    t = compute.training_time_s(2.1e23, np.array([[512], [1024]]), 320e12, mfu)
    assert t.shape == (2, 3)
    assert t[1, 2] == pytest.approx(t[0, 2] / 2)
    cards = compute.cards_for_deadline(2.1e23, 30 * 86400, 320e12, mfu, 8)
    assert cards.dtype.kind == "i" and list(cards % 8) == [0, 0, 0]
    assert cards[2] == 512
