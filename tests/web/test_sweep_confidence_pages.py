"""Sweeps sized for a chance of meeting the deadline on the web: each row's chance of missing on the
page and in the CSV as its estimate states it, the sweep builder asking the chance in percent (in
the base and as an axis) and the work-budget refusal, in English and Chinese."""

from __future__ import annotations

import json
import re

import pytest
from django.utils import translation

from estimator.contract import sweep as estimator_sweep
from estimator.errors import ScenarioError
from reports import formatting as fmt
from reports import messages
from sweeps import selectors as sweep_selectors
from sweeps import services as sweep_services
from tests.web.sweep_runs import BUILDER_BASE, run_sweep, zh_only
from tests.web.test_deadline_confidence import CONFIDENT, _compute_of


@pytest.fixture
def confident_sweep(monkeypatch, client):
    """A sweep of CONFIDENT (70B on Ascend 910B2, 90 % sure in 30 days) over the tokens, run in
    process, and its page in English and Chinese."""
    data = {"name": "q", "base": CONFIDENT, "axes": {"training.tokens": [2e11, 5e11]}}
    return run_sweep(monkeypatch, client, data)


@pytest.mark.django_db
def test_a_sweep_sized_for_a_chance_shows_each_rows_chance_of_missing_as_its_estimate(confident_sweep):
    sweep, en, zh = confident_sweep
    axes = [estimator_sweep.Axis(a["field"], tuple(a["values"])) for a in sweep.axes]
    page = sweep_selectors.result_page(sweep=sweep, page=1, page_size=10)
    miss = page["columns"].index("compute.deadline_miss_probability")
    asked = page["columns"].index("compute.deadline_confidence")
    cards = page["columns"].index("compute.cards")
    assert "Each row is sized for a 90% chance of meeting its deadline" in en
    assert "chance of missing the deadline" in en
    assert "每一行都按 90% 的按期完成概率确定规模" in zh and "错过截止日期的概率" in zh
    for index, row in enumerate(page["rows"]):
        compute = _compute_of(estimator_sweep.scenario_at(sweep.base, axes, index))
        assert row[cards] == compute["cards"] and row[asked] == compute["deadline_confidence"] == 0.9
        assert row[miss] == pytest.approx(compute["deadline_miss_probability"], rel=1e-9)
        assert row[miss] <= 0.1
        with translation.override("en"):
            shown = fmt.percent(compute["deadline_miss_probability"])
        assert re.search(rf"<td>{index}</td>.*?<td class=\"num\">{re.escape(shown)}</td>", en, re.S), index


@pytest.mark.django_db
def test_the_csv_of_a_sweep_sized_for_a_chance_has_the_chance_and_each_rows_chance_of_missing(
    confident_sweep, client
):
    sweep, _, _ = confident_sweep
    url = f"/api/v1/sweeps/shared/{sweep.share_token}/results?format=csv"
    lines = b"".join(client.get(url).streaming_content).decode().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]
    page = sweep_selectors.result_page(sweep=sweep, page=1, page_size=10)
    miss = page["columns"].index("compute.deadline_miss_probability")
    assert [float(r["compute.deadline_confidence"]) for r in rows] == [0.9, 0.9]
    for r, row in zip(rows, page["rows"], strict=True):
        assert float(r["compute.deadline_miss_probability"]) == pytest.approx(row[miss], rel=1e-9)


@pytest.mark.django_db
def test_the_sweep_builder_asks_the_chance_in_percent_with_the_deadline_only(client):
    from sweeps.builder import SweepBuilderForm

    html = client.get("/sweeps/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'name="deadline_confidence"' in html and "Chance of meeting the deadline (%)" in html
    assert "按期完成的概率（%）" in client.get("/zh-hans/sweeps/").content.decode()

    fields = {
        **BUILDER_BASE,
        "sizing": "deadline",
        "target_days": "30",
        "deadline_confidence": "90",
        "axis1_field": "training.tokens",
        "axis1_list": "200B, 500B",
    }
    form = SweepBuilderForm(fields)
    assert form.is_valid(), form.errors
    assert form.request()["base"]["cluster"] == {"target_days": 30.0, "deadline_confidence": 0.9}
    by_cards = SweepBuilderForm({**fields, "sizing": "cards", "cards": "1024"})
    assert by_cards.is_valid(), by_cards.errors
    assert by_cards.request()["base"]["cluster"] == {"cards": 1024}
    with translation.override("zh-hans"):
        high = SweepBuilderForm({**fields, "deadline_confidence": "100"})
        assert not high.is_valid()
        assert "小于或等于99" in high.errors["deadline_confidence"][0]


@pytest.mark.django_db
def test_the_sweep_builder_sweeps_the_chance_in_percent_as_the_base_asks_it(client):
    from sweeps.builder import SweepBuilderForm

    picker = client.get("/sweeps/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Chance of meeting the deadline (%) · cluster.deadline_confidence" in picker
    fields = {
        **BUILDER_BASE,
        "sizing": "deadline",
        "target_days": "30",
        "axis1_field": "cluster.deadline_confidence",
        "axis1_list": "50, 90, 99",
    }
    listed = SweepBuilderForm(fields)
    assert listed.is_valid(), listed.errors
    # percent / 100: 50 -> 0.5, 90 -> 0.9, 99 -> 0.99 (the core's bounds, 0.5-0.99)
    assert listed.request()["axes"] == {"cluster.deadline_confidence": [0.5, 0.9, 0.99]}
    ranged = SweepBuilderForm(
        {**fields, "axis1_list": "", "axis1_start": "80", "axis1_stop": "95", "axis1_step": "5"}
    )
    assert ranged.is_valid(), ranged.errors
    spec = ranged.request()["axes"]["cluster.deadline_confidence"]
    assert spec == {"start": 0.8, "stop": 0.95, "step": 0.05}
    # the core expands it: 0.8, 0.85, 0.9, 0.95 ((0.95 - 0.8) / 0.05 + 1 = 4 values)
    (axis,) = estimator_sweep.parse_axes(ranged.request()["axes"])
    assert list(axis.values) == [0.8, 0.85, 0.9, 0.95]
    with translation.override("en"):
        low = SweepBuilderForm({**fields, "axis1_list": "0.9, 95"})
        assert not low.is_valid()
        assert low.errors["axis1_list"] == ["Give chances between 50% and 99%."]
    with translation.override("zh-hans"):
        high = SweepBuilderForm(
            {**fields, "axis1_list": "", "axis1_start": "90", "axis1_stop": "100", "axis1_step": "5"}
        )
        assert not high.is_valid()
        assert high.errors["axis1_start"] == ["请给出 50% 到 99% 之间的概率。"]
    # with a card count the core refuses the axis (a chance needs a deadline), on the axis's picker
    by_cards = {**fields, "mode": "builder", "sizing": "cards", "cards": "1024"}
    html = client.post("/sweeps/", by_cards, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<a href="#field-axis1_field">Axis 1: field</a>' in html
    # the value it was refused at as typed (50, in percent), the sentence naming no field path
    assert "50%: needs a deadline in days: it is the chance of finishing by the deadline" in html
    assert "0.5:" not in html and "cluster.target_days:" not in html
    zh = client.post("/zh-hans/sweeps/", by_cards).content.decode()
    (error,) = re.findall(r'id="field-axis1_field".*?<ul class="errors"[^>]*>(.*?)</ul>', zh, re.S)
    assert error.strip().startswith("<li>50%：") and "0.5" not in error, error
    zh_only(re.sub(r"<[^>]+>", "", error))


@pytest.mark.django_db
def test_a_sweep_asking_too_many_searches_for_a_chance_is_refused_in_both_languages(client):
    # 101 token values x 100 deadlines: 10,100 sizings, past limits.MAX_SWEEP_CONFIDENT_SIZINGS (10,000)
    axes = {
        "training.tokens": {"start": 1e11, "stop": 2e11, "step": 1e9},
        "cluster.target_days": {"start": 1, "stop": 100, "step": 1},
    }
    with pytest.raises(ScenarioError) as info:
        sweep_services.create_sweep(data={"name": "q", "base": CONFIDENT, "axes": axes}, owner=None)
    (err,) = info.value.errors
    assert (err.field, err.code) == ("axes", "too-many-confident-sizings")
    with translation.override("en"):
        text = messages.scenario_error(err)
    assert text == (
        "sizing for a chance of meeting the deadline searches each of the 10,100 combinations of the "
        "axes other than prices; the limit is 10,000 per sweep: sweep fewer values"
    )
    with translation.override("zh-hans"):
        zh = messages.scenario_error(err)
    zh_only(zh)
    assert "10,100" in zh and "10,000" in zh
    data = {"name": "q", "base": json.dumps(CONFIDENT), "axes": json.dumps(axes)}
    html = client.post("/zh-hans/sweeps/", data).content.decode()
    assert "按“按期完成的概率”确定规模要对价格以外各扫描轴的 10,100 种组合逐一搜索" in html
