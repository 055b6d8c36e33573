"""Sweep services in-process (no broker): chunks stored once, summary, results, failure, cancel,
watchdog, and the pages."""

import csv
import io
import itertools
import re

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from estimator.dotted import get_path
from estimator.errors import ScenarioError
from estimator.plan.batch import SUMMARY_FIELDS
from estimator.plan.compose import estimate
from sweeps import selectors, services, watchdog
from sweeps.models import Sweep, SweepChunk

pytestmark = pytest.mark.django_db

AXES = {
    "cluster.cards": {"start": 256, "stop": 4096, "step": 256},
    "hardware.accelerator": ["ascend-910b2", "h100-sxm", "a100-sxm-80gb"],
    "efficiency.mfu": [0.35, 0.45, 0.55],
}  # 16 x 3 x 3 = 144 scenarios


@pytest.fixture
def user():
    return get_user_model().objects.create_user("ana", password="pw-12345678")


@pytest.fixture
def sweep(base, user, settings, monkeypatch):
    settings.SWEEP_CHUNK_SIZE = 50  # 3 chunks, the last one short
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    return services.create_sweep(data={"name": "t", "base": base, "axes": AXES}, owner=user)


def run_all(sweep):
    return [services.run_chunk(sweep_id=sweep.pk, index=i, worker="test") for i in range(sweep.chunks_total)]


def value_at(result: dict, dotted: str):
    value = get_path(result, dotted, KeyError)
    if value is KeyError:
        raise KeyError(dotted)
    return value


def test_anonymous_limit_is_the_documented_two_per_client(base, monkeypatch):
    """README and settings say 2 active anonymous sweeps per client address (no second default)."""
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    small = {"name": "a", "base": base, "axes": {"efficiency.mfu": [0.4, 0.5]}}
    for _ in range(2):
        services.create_sweep(data=small, owner=None, client_ip="192.0.2.7")
    with pytest.raises(ScenarioError, match="2 sweep"):
        services.create_sweep(data=small, owner=None, client_ip="192.0.2.7")


def test_every_chunk_is_stored_once_and_counted_once(sweep):
    assert (sweep.total, sweep.chunks_total) == (144, 3)
    assert run_all(sweep) == ["stored"] * 3
    assert services.run_chunk(sweep_id=sweep.pk, index=1) == "skipped"  # done: nothing more to do
    # a redelivered chunk while still running is a no-op too
    sweep.refresh_from_db()
    assert (sweep.status, sweep.done, sweep.chunks_done) == ("done", 144, 3)
    assert SweepChunk.objects.filter(sweep=sweep).count() == 3
    assert sweep.started_at and sweep.finished_at and sweep.compute_s > 0


def test_a_duplicate_chunk_while_running_changes_nothing(sweep):
    assert services.run_chunk(sweep_id=sweep.pk, index=0) == "stored"
    assert services.run_chunk(sweep_id=sweep.pk, index=0) == "duplicate"
    sweep.refresh_from_db()
    assert (sweep.status, sweep.done, sweep.chunks_done) == ("running", 50, 1)


def test_a_chunk_stored_by_a_twin_message_between_the_look_and_the_lease_is_not_computed_again(
    sweep, monkeypatch
):
    """Two messages for chunk 0 (the watchdog re-queued it): the first worker stores it and drops
    its lease after the second looked for it but before the second takes the lease. Under its lease
    the second looks again and leaves it; the chunk is stored and counted once."""
    real_acquire = services.acquire_lease

    def twin_finishes_first(**kwargs):
        monkeypatch.setattr(services, "acquire_lease", real_acquire)
        assert services.run_chunk(sweep_id=sweep.pk, index=0) == "stored"  # the twin, inside the gap
        return real_acquire(**kwargs)

    monkeypatch.setattr(services, "acquire_lease", twin_finishes_first)
    monkeypatch.setattr(services, "_compute_and_store", _fails_if_called(services._compute_and_store))
    assert services.run_chunk(sweep_id=sweep.pk, index=0) == "duplicate"
    sweep.refresh_from_db()
    assert (sweep.done, sweep.chunks_done) == (50, 1)
    assert SweepChunk.objects.filter(sweep=sweep, index=0).count() == 1


def _fails_if_called(compute):
    """`compute` for the first call (the twin's), an assertion error for any later one."""
    calls = []

    def once(*args, **kwargs):
        assert not calls, "the chunk was computed a second time"
        calls.append(args)
        return compute(*args, **kwargs)

    return once


def test_results_equal_the_core_estimate(sweep):
    run_all(sweep)
    sweep.refresh_from_db()
    page = selectors.result_page(sweep=sweep, page=1, page_size=1000)
    assert page["count"] == 144 and len(page["rows"]) == 144
    cols = page["columns"]
    for index in (0, 49, 50, 77, 143):
        row = dict(zip(cols, page["rows"][index], strict=True))
        assert row["index"] == index
        scenario = selectors.scenario_of(sweep=sweep, index=index)
        assert row["cluster.cards"] == scenario["cluster"]["cards"]
        result = estimate(scenario)["result"]
        for field in SUMMARY_FIELDS:
            expected = value_at(result, field)
            if expected is None:
                assert row[field] is None
            else:
                assert row[field] == pytest.approx(expected, rel=1e-9), field


def test_summary_best_rows_pareto_and_heatmaps(sweep):
    run_all(sweep)
    sweep.refresh_from_db()
    s = sweep.summary
    assert s["scenarios"] == 144 and s["feasible"] <= 144
    page = selectors.result_page(sweep=sweep, page=1, page_size=1000)
    days = np.array(
        [r[page["columns"].index("compute.wall_clock_days")] or np.inf for r in page["rows"]], dtype=float
    )
    best = s["best"]["compute.wall_clock_days"]
    assert best[0]["compute.wall_clock_days"] == pytest.approx(days.min(), rel=1e-5)
    front = s["pareto"]["cost.run.owned"]
    assert front and all(a[1] <= b[1] and a[2] >= b[2] for a, b in itertools.pairwise(front))
    heat = s["heat"][0]
    assert len(heat["z"]) == len(next(a for a in sweep.axes if a["field"] == heat["y"])["values"])


def test_csv_and_json_pages_agree(sweep, user):
    run_all(sweep)
    api = APIClient()
    api.force_authenticate(user)
    r = api.get(f"/api/v1/sweeps/{sweep.pk}/results?format=csv")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert rows[0][:4] == ["index", "cluster.cards", "hardware.accelerator", "efficiency.mfu"]
    assert len(rows) == 145
    page2 = api.get(f"/api/v1/sweeps/{sweep.pk}/results?page=2&page_size=40").json()
    assert page2["pages"] == 4 and [r[0] for r in page2["rows"]] == list(
        range(40, 80)
    )  # crosses a chunk edge
    assert rows[41][0] == "40" and rows[41][2] == page2["rows"][0][2]
    shared = APIClient().get(f"/api/v1/sweeps/shared/{sweep.share_token}/results?page=4&page_size=40").json()
    assert [r[0] for r in shared["rows"]] == list(range(120, 144))


def test_a_failing_chunk_fails_the_sweep_with_a_reason(sweep, client, monkeypatch):
    import estimator.plan.batch

    def broken(base, columns, books=None):
        raise ScenarioError("the catalog has no price for this chip", field="hardware.accelerator")

    monkeypatch.setattr(estimator.plan.batch, "evaluate_columns", broken)
    assert services.run_chunk(sweep_id=sweep.pk, index=1) == "failed"
    sweep.refresh_from_db()
    assert sweep.status == "failed"
    assert "chunk 1" in sweep.error and "no price" in sweep.error
    assert services.run_chunk(sweep_id=sweep.pk, index=0) == "skipped"
    page = client.get(f"/sweeps/{sweep.share_token}/").content.decode()
    assert 'id="sweep-error"' in page and "no price" in page and "sweep-progress" not in page


def test_cancel_stops_further_chunks(sweep):
    services.run_chunk(sweep_id=sweep.pk, index=0)
    assert services.cancel(sweep=sweep)
    assert run_all(sweep) == ["skipped"] * 3
    sweep.refresh_from_db()
    assert (sweep.status, sweep.done) == ("cancelled", 50)


def test_watchdog_requeues_then_fails_a_stalled_sweep(sweep, settings, monkeypatch):
    settings.SWEEP_STALL_S, settings.SWEEP_FAIL_AFTER_S = 10, 100
    sent = []
    monkeypatch.setattr(services, "enqueue_chunks", lambda sweep_id, indexes=None: sent.append(sweep_id) or 3)
    assert watchdog.watchdog(sweep=sweep) == "ok" and not sent
    Sweep.objects.filter(pk=sweep.pk).update(progress_at=timezone.now() - timezone.timedelta(seconds=30))
    sweep.refresh_from_db()
    assert watchdog.watchdog(sweep=sweep) == "requeued" and sent == [sweep.pk]
    assert watchdog.watchdog(sweep=sweep) == "ok" and len(sent) == 1  # once per stall period
    Sweep.objects.filter(pk=sweep.pk).update(
        progress_at=timezone.now() - timezone.timedelta(seconds=200),
        error="broker unavailable while queuing chunks",
    )
    sweep.refresh_from_db()
    assert watchdog.watchdog(sweep=sweep) == "failed"
    assert (
        sweep.status == "failed" and "no progress for" in sweep.error and "broker unavailable" in sweep.error
    )


def test_rows_the_core_cannot_plan_are_flagged_not_fatal(base, user, client, monkeypatch):
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    base["parallelism"] = {"tp": 8, "pp": 4, "dp": 8}  # only 256 cards fit this fixed layout
    sweep = services.create_sweep(data={"base": base, "axes": {"cluster.cards": [256, 512]}}, owner=user)
    services.run_chunk(sweep_id=sweep.pk, index=0)
    sweep.refresh_from_db()
    assert sweep.status == "done"
    rows = selectors.result_page(sweep=sweep, page=1, page_size=10)
    ok = rows["columns"].index("ok")
    assert [r[ok] for r in rows["rows"]] == [True, False]
    assert sweep.summary["feasible"] == 1 and sweep.summary["errors"]
    page = client.get(f"/sweeps/{sweep.share_token}/").content.decode()
    assert 'id="sweep-row-errors"' in page


class TestPages:
    def test_form_creates_a_sweep_and_the_report_shows_progress_then_charts(
        self, client, base, settings, monkeypatch
    ):
        import json

        monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
        r = client.get("/sweeps/")
        assert r.status_code == 200 and b"id_axes" in r.content
        r = client.post("/sweeps/", {"name": "web", "base": json.dumps(base), "axes": json.dumps(AXES)})
        assert r.status_code == 302
        sweep = Sweep.objects.get()
        assert r["Location"] == f"/sweeps/{sweep.share_token}/"
        page = client.get(r["Location"])
        assert (
            page.status_code == 200
            and b"sweep-progress" in page.content
            and b'http-equiv="refresh"' in page.content
        )
        run_all(sweep)
        page = client.get(r["Location"]).content.decode()
        assert 'id="pareto"' in page and 'id="heat-0"' in page and "Full estimate" in page
        assert "vendor/plotly/plotly.min.js" in page and "sweep-progress" not in page
        # the JSON of one scenario and its full estimate
        scen = client.get(f"/sweeps/{sweep.share_token}/scenario/5.json").json()
        assert scen["cluster"]["cards"] == 256
        r = client.post(f"/sweeps/{sweep.share_token}/scenario/5/estimate")
        assert r.status_code == 302 and "/r/" in r["Location"]

    def test_form_errors_are_shown_next_to_the_field(self, client, base):
        import json

        r = client.post("/sweeps/", {"base": json.dumps(base), "axes": json.dumps({"cluster.cards": []})})
        assert r.status_code == 400 and b"axes.cluster.cards" in r.content
        r = client.post("/sweeps/", {"base": "{not json", "axes": "{}"})
        assert r.status_code == 400 and b"not valid JSON" in r.content

    def test_only_the_creator_can_cancel(self, client, base, monkeypatch):
        import json

        monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
        client.post("/sweeps/", {"base": json.dumps(base), "axes": json.dumps(AXES)})
        sweep = Sweep.objects.get()
        from django.test import Client

        assert Client().post(f"/sweeps/{sweep.share_token}/cancel").status_code == 404
        assert client.post(f"/sweeps/{sweep.share_token}/cancel").status_code == 302
        sweep.refresh_from_db()
        assert sweep.status == "cancelled"


def _counts(page: str, phrase: str) -> bool:
    """The page says `phrase` as a count of its own ("1 scenarios", not the end of "31 scenarios/s")."""
    return re.search(r"(?<![\d.,])" + re.escape(phrase), page) is not None


def test_a_one_axis_sweep_says_axis(base, user, client, monkeypatch):
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    one = services.create_sweep(
        data={"name": "one", "base": base, "axes": {"efficiency.mfu": [0.35, 0.45]}}, owner=user
    )
    page = client.get(f"/sweeps/{one.share_token}/").content.decode()
    assert "2 scenarios over 1 axis" in page and not _counts(page, "1 axes")
    zh = client.get(f"/zh-hans/sweeps/{one.share_token}/").content.decode()
    assert "1 个轴上共 2 个场景" in zh


def test_a_one_scenario_sweep_says_scenario(base, user, client, monkeypatch):
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    one = services.create_sweep(
        data={"name": "one", "base": base, "axes": {"efficiency.mfu": [0.4]}}, owner=user
    )
    assert run_all(one) == ["stored"]
    page = client.get(f"/sweeps/{one.share_token}/").content.decode()
    assert "1 scenario, 1 could be planned" in page
    # the meta line's two counts agree each with its own noun, and so does the axis' value count
    assert "1 scenario over 1 axis" in page and not _counts(page, "1 scenarios")
    assert "1 value " in page and not _counts(page, "1 values")
    zh = client.get(f"/zh-hans/sweeps/{one.share_token}/").content.decode()
    assert "1 个轴上共 1 个场景" in zh and "1 个取值" in zh
    assert "个场景，其中 1 个可以规划" in client.get(f"/zh-hans/sweeps/{one.share_token}/").content.decode()


def test_a_running_one_scenario_sweep_counts_one_scenario(base, user, client, monkeypatch):
    """The progress line's total takes the plural of its own number ("0 / 1 scenario")."""
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    one = services.create_sweep(
        data={"name": "one", "base": base, "axes": {"efficiency.mfu": [0.4]}}, owner=user
    )
    assert one.is_active
    page = client.get(f"/sweeps/{one.share_token}/").content.decode()
    assert "/ 1 scenario\n" in page or "/ 1 scenario " in page or "/ 1 scenario<" in page
    assert not _counts(page, "1 scenarios")
    assert "/ 1 个场景" in client.get(f"/zh-hans/sweeps/{one.share_token}/").content.decode()


@pytest.mark.django_db
def test_a_core_field_error_on_the_sweep_page_is_in_the_readers_language(client, base):
    """A type error in the base plan is said by its code (must-be-json-number), not in English."""
    import json

    bad = {**base, "training": {**base.get("training", {}), "seq_len": "long"}}
    r = client.post("/zh-hans/sweeps/", {"base": json.dumps(bad), "axes": json.dumps(AXES)})
    assert r.status_code == 400
    page = r.content.decode()
    assert "必须是 JSON 数字" in page and "must be a JSON number" not in page
