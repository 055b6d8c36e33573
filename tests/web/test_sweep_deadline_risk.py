"""A sweep sized by deadline without a chance asked: each row carries the chance of missing its
deadline that its estimate states for every deadline plan (compute.deadline_miss_probability), in
the results, the CSV and the best tables of the page; a sweep sized by cards has none."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from estimator.contract import sweep as estimator_sweep
from estimator.plan.compose import estimate
from reports import formatting as fmt
from sweeps import selectors as sweep_selectors
from sweeps import services as sweep_services

BY_DEADLINE = {  # 70B, 500B tokens on Ascend 910B2, MFU predicted, failures counted
    "name": "70B deadline",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"target_days": 30},
    "cost": {"currency": "CNY"},
}
MISS = "compute.deadline_miss_probability"


def _run(monkeypatch, data: dict):
    monkeypatch.setattr(sweep_services, "enqueue_chunks", lambda *a, **k: 0)
    sweep = sweep_services.create_sweep(data=data, owner=None)
    for i in range(sweep.chunks_total):
        sweep_services.run_chunk(sweep_id=sweep.pk, index=i, worker="test")
    sweep.refresh_from_db()
    assert sweep.status == "done", sweep.error
    return sweep


@pytest.mark.django_db
def test_deadline_rows_carry_their_estimates_chance_of_missing(monkeypatch, client):
    sweep = _run(monkeypatch, {"name": "d", "base": BY_DEADLINE, "axes": {"cluster.target_days": [20, 30]}})
    axes = [estimator_sweep.Axis(a["field"], tuple(a["values"])) for a in sweep.axes]
    page = sweep_selectors.result_page(sweep=sweep, page=1, page_size=10)
    miss, asked = page["columns"].index(MISS), page["columns"].index("compute.deadline_confidence")
    en = client.get(f"/sweeps/{sweep.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    zh = client.get(f"/zh-hans/sweeps/{sweep.share_token}/").content.decode()
    assert "chance of missing the deadline" in en and "错过截止日期的概率" in zh
    assert "Each row is sized for" not in en  # no chance asked: sized at the planned MFU
    for index, row in enumerate(page["rows"]):
        compute = estimate(estimator_sweep.scenario_at(sweep.base, axes, index))["result"]["compute"]
        assert 0 < row[miss] < 1 and row[asked] is None
        assert row[miss] == pytest.approx(compute["deadline_miss_probability"], rel=1e-9)
        with translation.override("en"):
            shown = fmt.percent(compute["deadline_miss_probability"])
        assert re.search(rf"<td>{index}</td>.*?<td class=\"num\">{re.escape(shown)}</td>", en, re.S), index
    url = f"/api/v1/sweeps/shared/{sweep.share_token}/results?format=csv"
    lines = b"".join(client.get(url).streaming_content).decode().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]
    for r, row in zip(rows, page["rows"], strict=True):
        assert float(r[MISS]) == pytest.approx(row[miss], rel=1e-9)


@pytest.mark.django_db
def test_rows_sized_by_cards_state_no_chance_of_missing(monkeypatch, client):
    base = {**BY_DEADLINE, "cluster": {"cards": 512}}
    sweep = _run(monkeypatch, {"name": "c", "base": base, "axes": {"training.tokens": [2e11, 5e11]}})
    page = sweep_selectors.result_page(sweep=sweep, page=1, page_size=10)
    miss = page["columns"].index(MISS)
    assert [row[miss] for row in page["rows"]] == [None, None]
    en = client.get(f"/sweeps/{sweep.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "chance of missing the deadline" not in en
