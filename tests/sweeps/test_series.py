"""Issue 24 item 4: a sweep over models (or chips) has one Pareto front and one table per series,
so a small model does not win every row. In-process (no broker); chunks cut the series apart."""

import numpy as np
import pytest

from sweeps import selectors, services

pytestmark = pytest.mark.django_db

MODELS = ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b"]
AXES = {"model.preset": MODELS, "cluster.cards": [256, 512, 1024, 2048, 4096], "efficiency.mfu": [0.35, 0.5]}


@pytest.fixture
def done(base, settings, monkeypatch):
    settings.SWEEP_CHUNK_SIZE = 7  # 30 scenarios in 5 chunks: a series spans several chunks
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    sweep = services.create_sweep(data={"name": "three models", "base": base, "axes": AXES}, owner=None)
    for i in range(sweep.chunks_total):
        services.run_chunk(sweep_id=sweep.pk, index=i, worker="test")
    sweep.refresh_from_db()
    assert sweep.status == "done"
    return sweep


def _rows_by_model(sweep) -> dict[str, list[tuple[int, float, float]]]:
    page = selectors.result_page(sweep=sweep, page=1, page_size=1000)
    c = page["columns"]
    out: dict[str, list] = {m: [] for m in MODELS}
    for r in page["rows"]:
        if r[c.index("ok")]:
            out[r[c.index("model.preset")]].append(
                (r[0], r[c.index("compute.wall_clock_days")], r[c.index("cost.run.owned")])
            )
    return out


def _brute_front(rows) -> set[int]:
    return {
        i for i, x, y in rows if not any(x2 <= x and y2 <= y and (x2 < x or y2 < y) for _j, x2, y2 in rows)
    }


def test_each_model_has_its_own_front_and_best_rows(done):
    series = done.summary["series"]
    assert series["field"] == "model.preset" and series["values"] == MODELS
    for model, rows in _rows_by_model(done).items():
        front = series["pareto"][model]["cost.run.owned"]
        assert {p[0] for p in front} == _brute_front(rows), model
        best = series["best"][model]["compute.wall_clock_days"]
        assert best[0]["compute.wall_clock_days"] == pytest.approx(min(x for _i, x, _y in rows), rel=1e-5)
        assert {r["index"] for r in best} <= {i for i, _x, _y in rows}  # only this model's rows


def test_the_page_draws_a_coloured_front_and_a_table_per_model(done, client):
    html = client.get(f"/sweeps/{done.share_token}/").content.decode()
    for model in MODELS:
        assert f'data-series="{model}"' in html
    assert html.count('class="swatch"') == 3
    from sweeps import charts
    from sweeps.pages import _describer, _group_of

    fig = charts.pareto(done.summary, _describer(done.axes), "USD", _group_of(done))
    fronts = [t for t in fig.data if t.mode == "lines+markers" and t.line.dash == "solid"]
    assert [t.legendgroup for t in fronts] == MODELS
    assert len({t.line.color for t in fronts}) == 3
    samples = {t.legendgroup: t.marker.color for t in fig.data if t.mode == "markers"}
    assert all(samples[t.legendgroup] == t.line.color for t in fronts)  # points and front share a colour


def test_a_sweep_without_models_or_chips_keeps_one_front(base, settings, monkeypatch):
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    sweep = services.create_sweep(data={"base": base, "axes": {"cluster.cards": [256, 512]}}, owner=None)
    services.run_chunk(sweep_id=sweep.pk, index=0, worker="test")
    sweep.refresh_from_db()
    assert "series" not in sweep.summary and sweep.summary["pareto"]["cost.run.owned"]
    assert np.isfinite(sweep.summary["pareto"]["cost.run.owned"][0][1])


def test_heatmap_colour_bars_write_money_the_readers_way(done):
    from django.utils import translation

    from sweeps import charts

    item = next(h for h in done.summary["heat"] if h["metric"] == "cost.run.owned")
    with translation.override("zh-hans"):
        bar = charts.heatmap(item, done.axes, "CNY").data[0].colorbar
    assert bar.ticktext and all("万" in t or "亿" in t or t.startswith("¥0") for t in bar.ticktext)
