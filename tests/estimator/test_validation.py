"""estimator.validation: the layout model against Narayanan et al. 2021 and the ZeRO paper."""

from pathlib import Path

import pytest

from estimator import validation
from estimator.steptime import TRAINING_GEMM_FRACTION

SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference"


@pytest.fixture(scope="module")
def megatron():
    return validation.megatron_rows()


def test_every_megatron_row_within_10_percent(megatron):
    assert len(megatron) == 10
    for row in megatron:
        assert abs(row["error_pct"]) <= 10.0, row


def test_megatron_mean_absolute_error_at_most_5_percent(megatron):
    mae = sum(abs(r["error_pct"]) for r in megatron) / len(megatron)
    assert mae <= 5.0


def test_megatron_rows_shape(megatron):
    assert set(megatron[0]) >= {"case", "published", "predicted", "error_pct"}
    assert megatron[-1]["published"] == 163.0  # the 1T row, confirmed by the paper's abstract


def test_calibrated_constant_is_the_best_on_its_grid():
    best, mae = validation.calibrate_gemm_fraction(
        [TRAINING_GEMM_FRACTION - 0.02, TRAINING_GEMM_FRACTION, TRAINING_GEMM_FRACTION + 0.02]
    )
    assert best == TRAINING_GEMM_FRACTION and mae <= 5.0


def test_zero_rows_exact():
    rows = validation.zero_rows()
    assert [r["published"] for r in rows] == [120, 31.4, 16.6, 1.9]
    assert all(r["predicted"] == r["published"] and r["error_pct"] == 0 for r in rows)


def test_megatron_flop_formula():
    # 1T row: 96·B·s·l·h²·(1 + s/6h + V/16lh)
    f = validation.megatron_hardware_flop_per_step(3072, 128, 25600)
    assert f == pytest.approx(
        96 * 3072 * 2048 * 128 * 25600**2 * (1 + 2048 / (6 * 25600) + 51200 / (16 * 128 * 25600))
    )


@pytest.mark.parametrize("name", ["megatron2021_weak_scaling.csv", "zero_memory.csv"])
def test_reference_copies_match_the_shared_folder(name):
    ours = validation.REFERENCE_DIR / name
    assert ours.read_text().startswith("#")  # header comments with the source are kept
    if not (SHARED / name).exists():
        pytest.skip("shared reference folder not present")
    assert ours.read_text() == (SHARED / name).read_text()
