"""The results CSV, built column by column: each cell what the csv module writes for the row's value
(floats by repr), text through the spreadsheet-formula guard, amounts as decimal strings in the
sweep's or the row's currency; and the rows equal the JSON pages'."""

import csv
import io
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sweeps import services
from sweeps.api import views


def test_float_cells_are_their_repr_with_the_sign_of_zero():
    cells = views._csv_cells(np.array([0.0, -0.0, 1.5, np.nan, 1e300, 1.5, -np.inf]))
    assert cells == ["0.0", "-0.0", "1.5", "nan", "1e+300", "1.5", "-inf"]


def test_text_cells_that_could_start_a_formula_get_a_quote():
    cells = views._csv_cells(np.array(["=SUM(A1)", "h100-sxm", "-2", "=SUM(A1)"]))
    assert cells == ["'=SUM(A1)", "h100-sxm", "'-2", "'=SUM(A1)"]
    assert views._csv_cells(np.array([None, "+x"], dtype=object)) == [None, "'+x"]


def test_int_and_bool_cells_are_left_to_the_csv_module():
    assert views._csv_cells(np.array([3, -4])) == [3, -4]
    assert views._csv_cells(np.array([True, False])) == [True, False]


def test_amount_cells_are_decimal_strings_rounded_half_even():
    """1234.565 -> 1234.56 and 0.125 -> 0.12 (half to even, from the shortest repr); no amount:
    empty; -0.0 is "-0.00", which the formula guard quotes."""
    cells = views._amount_cells(np.array([1234.565, np.nan, 0.125, -0.0, 1234.565]), "USD", None)
    assert cells == ["1234.56", "", "0.12", "'-0.00", "1234.56"]


def test_amount_cells_in_each_rows_currency():
    """The yen has no minor unit: 1234.5 -> 1234 (half to even), 1235.5 -> 1236."""
    cells = views._amount_cells(np.array([1234.5, 1234.5, 1235.5]), None, ["USD", "JPY", "JPY"])
    assert cells == ["1234.50", "1234", "1236"]


@pytest.mark.django_db
def test_csv_rows_equal_the_json_rows_with_a_swept_currency(base, settings, monkeypatch):
    settings.SWEEP_CHUNK_SIZE = 7  # blocks and chunks of odd sizes
    monkeypatch.setattr(views, "CSV_BLOCK_ROWS", 3)
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    user = get_user_model().objects.create_user("csv", password="pw-12345678")
    axes = {"cost.currency": ["USD", "CNY"], "cluster.cards": [512, 1024, 2048], "efficiency.mfu": [0.3, 0.5]}
    sweep = services.create_sweep(data={"name": "c", "base": base, "axes": axes}, owner=user)
    for i in range(sweep.chunks_total):
        services.run_chunk(sweep_id=sweep.pk, index=i, worker="test")
    api = APIClient()
    api.force_authenticate(user)
    rows = list(
        csv.reader(
            io.StringIO(
                b"".join(api.get(f"/api/v1/sweeps/{sweep.pk}/results?format=csv").streaming_content).decode()
            )
        )
    )
    page = api.get(f"/api/v1/sweeps/{sweep.pk}/results?page=1&page_size=100").json()
    assert len(rows) == 1 + 12 == 1 + len(page["rows"])
    header, columns = rows[0], page["columns"]
    assert header[columns.index("cost.run.owned")] == "cost.run.owned (cost.currency)"
    cur = columns.index("cost.currency")
    for got, want in zip(rows[1:], page["rows"], strict=True):
        for name, cell, value in zip(columns, got, want, strict=True):
            if name in page["amount_columns"]:  # USD and CNY: 2 minor digits, a rate 2 more
                places = Decimal("0.0001") if name in SWEPT_RATES else Decimal("0.01")
                assert cell == str(Decimal(repr(value)).quantize(places, rounding=ROUND_HALF_EVEN))
            elif value is None:
                assert cell in ("", "nan"), name  # JSON null: no message, or a NaN figure
            elif isinstance(value, bool):
                assert cell == str(value), name
            elif isinstance(value, float):
                assert float(cell) == value, name  # repr in the CSV, the same float in JSON
            else:
                assert cell == str(value), name
        assert got[cur] in ("USD", "CNY")


# Every amount a sweep row carries (estimator.money.rollup.SUMMARY_FIELDS in money; by hand): the four
# capex parts besides the total, and the owned price per card-hour, a rate with two more places.
SWEPT_TOTALS = (
    "cost.capex.compute",
    "cost.capex.network",
    "cost.capex.storage",
    "cost.capex.scaleup",
    "cost.capex.total",
    "cost.run.owned",
    "cost.run.cloud",
    "cost.run.cloud_reserved",
)
SWEPT_RATES = ("cost.owned_per_card_hour",)


@pytest.mark.django_db
def test_every_amount_column_names_its_currency_and_is_a_decimal_string(base, monkeypatch):
    """Before, only four of the nine were amounts: cost.capex.compute read 21120000.0 under a header
    without a currency, and the JSON's amount_columns left it out."""
    from estimator.plan.compose import estimate

    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    user = get_user_model().objects.create_user("amounts", password="pw-12345678")
    base = {**base, "cost": {"currency": "CNY"}}
    sweep = services.create_sweep(data={"base": base, "axes": {"cluster.cards": [512, 1024]}}, owner=user)
    services.run_chunk(sweep_id=sweep.pk, index=0, worker="test")
    api = APIClient()
    api.force_authenticate(user)
    page = api.get(f"/api/v1/sweeps/{sweep.pk}/results?page=1&page_size=100").json()
    assert set(page["amount_columns"]) == {*SWEPT_TOTALS, *SWEPT_RATES}
    body = b"".join(api.get(f"/api/v1/sweeps/{sweep.pk}/results?format=csv").streaming_content).decode()
    header, *rows = list(csv.reader(io.StringIO(body)))
    for i, cards in enumerate((512, 1024)):
        result = estimate({**base, "cluster": {"cards": cards}})["result"]
        for name in (*SWEPT_TOTALS, *SWEPT_RATES):
            cell = rows[i][header.index(f"{name} (CNY)")]
            places = Decimal("0.0001") if name in SWEPT_RATES else Decimal("0.01")  # CNY: 2 minor digits
            want = Decimal(repr(float(_dig(result, name)))).quantize(places, rounding=ROUND_HALF_EVEN)
            assert cell == str(want), (cards, name)


def _dig(result: dict, path: str):
    for key in path.split("."):
        result = result[key]
    return result
