"""The ratchet over every published row (estimator/validation/ratchet.py): each validation row inside
the accepted band that reference_data/accepted_errors.toml gives it."""

from __future__ import annotations

import pytest

from estimator.validation import validation_rows
from estimator.validation.ratchet import accepted, row_id, violations


@pytest.fixture(scope="module")
def rows():
    return validation_rows()


def test_every_row_has_a_band_and_lies_inside_it(rows):
    bad = violations(rows, accepted())
    assert not bad, "rows outside their accepted band (rewrite with a reason): " + "; ".join(
        f"{rid} {err:+.1f}% not in {band}" for rid, err, band in bad
    )


def test_no_band_is_left_for_a_row_that_is_gone(rows):
    assert set(accepted()) == {row_id(r) for r in rows}


def test_a_row_outside_its_band_is_reported():
    row = {"suite": "s", "case": "c", "metric": "m", "error_pct": 12.0}
    assert violations([row], {"s/c [m]": (-2.0, 2.0)}) == [("s/c [m]", 12.0, (-2.0, 2.0))]
    assert violations([row], {}) == [("s/c [m]", 12.0, None)]
