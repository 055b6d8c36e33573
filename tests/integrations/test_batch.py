"""POST /api/v1/estimates/batch (202 at once, planned by the batch task: run eagerly here), GET it
again, its comparison page and Excel file, and the per-caller cap on batches in flight."""

import io
import json

import pytest
from openpyxl import load_workbook

from estimator import limits
from integrations import batches
from integrations.models import Batch
from reports.models import Estimate
from reports.services import prepare_estimate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _planned_when_committed(eager_celery, django_capture_on_commit_callbacks, monkeypatch):
    """Every batch POST's commit hooks run (its task, eagerly): the batch is planned when the POST
    returns, as a worker would have planned it a moment later."""
    from rest_framework.test import APIClient

    original = APIClient.post

    def post(self, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return original(self, *args, **kwargs)

    monkeypatch.setattr(APIClient, "post", post)


def submit(client, body, query=""):
    """POST a batch (202, every item waiting) and GET what it became."""
    r = client.post(f"/api/v1/estimates/batch{query}", body, format="json")
    if r.status_code != 202:
        return r, None
    first = r.json()
    assert first["status"] == "queued" and {i["status"] for i in first["results"]} == {202}
    assert first["pending"] == first["count"]
    return r, client.get(first["url"]).json()


def quotes(scenario, n):
    """n vendor quotes: the same plan at server prices 100,000, 110,000, ... (what differs)."""
    return [
        {**scenario, "name": f"Vendor {i}", "cost": {"server_price": 100_000 + 10_000 * i}} for i in range(n)
    ]


def test_items_answer_in_order_and_one_bad_one_spoils_nothing(user_client, scenario):
    bad = {**scenario, "training": {"tokens": -5}}
    r, body = submit(user_client, {"name": "RFQ 7", "scenarios": [scenario, bad, "nope"]})
    assert r.status_code == 202, r.content
    assert body["status"] == "done" and body["pending"] == 0
    assert [i["index"] for i in body["results"]] == [0, 1, 2]
    assert [i["status"] for i in body["results"]] == [201, 400, 400]
    assert (body["count"], body["planned"], body["failed"]) == (3, 1, 2)
    fields = [e["field"] for e in body["results"][1]["error"]["errors"]]
    assert fields == ["scenarios.1.training.tokens"]
    assert body["results"][2]["error"]["errors"][0]["field"] == "scenarios.2"
    # the estimate is the one POST /api/v1/estimates makes for the same scenario
    single = user_client.post("/api/v1/estimates", scenario, format="json").json()
    planned = body["results"][0]["estimate"]
    assert planned["result"] == single["result"] and planned["scenario"] == single["scenario"]
    assert set(planned) == set(single)
    assert Estimate.objects.filter(owner__username="alice").count() == 2
    assert r["Location"] == body["url"] and body["url"].endswith(f"/api/v1/estimates/batch/{body['id']}")
    assert Batch.objects.get().scenarios == []  # done: the request's copy is not kept


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], ""),
        ({}, "scenarios"),
        ({"scenarios": []}, "scenarios"),
        ({"scenarios": {"a": 1}}, "scenarios"),
        ({"scenarios": [{}], "name": 5}, "name"),
        ({"scenarios": [{}], "vendor": "x"}, "vendor"),
        ({"scenarios": [{}], "callback": {"url": "https://example.com/h"}}, "callback"),  # anonymous
    ],
)
def test_a_malformed_batch_answers_400_with_the_field(api_client, body, field):
    r = api_client.post("/api/v1/estimates/batch", body, format="json")
    assert r.status_code == 400
    assert r.json()["errors"][0]["field"] == field
    assert Batch.objects.count() == 0


def test_more_than_the_documented_number_of_scenarios_is_refused(user_client, scenario):
    assert limits.MAX_BATCH_SCENARIOS == 50
    r = user_client.post("/api/v1/estimates/batch", {"scenarios": [scenario] * 51}, format="json")
    assert r.status_code == 400
    assert r.json()["errors"] == [
        {"field": "scenarios", "message": "has 51 scenarios; the limit is 50 per batch"}
    ]
    assert Estimate.objects.count() == 0


def test_each_caller_has_at_most_its_cap_of_batches_in_flight(
    user, user_client, other_client, scenario, settings
):
    settings.BATCH_MAX_ACTIVE_PER_USER = 2
    Batch.objects.create(owner=user, status=Batch.Status.QUEUED)
    Batch.objects.create(owner=user, status=Batch.Status.RUNNING)
    r = user_client.post("/api/v1/estimates/batch", {"scenarios": [scenario]}, format="json")
    assert r.status_code == 429 and int(r["Retry-After"]) >= 1
    assert "2 batch(es) queued or running" in r.json()["errors"][0]["message"]
    assert Batch.objects.count() == 2 and not Estimate.objects.exists()
    assert (
        other_client.post("/api/v1/estimates/batch", {"scenarios": [scenario]}, format="json").status_code
        == 202
    )
    Batch.objects.filter(owner=user).update(status=Batch.Status.DONE)
    assert (
        user_client.post("/api/v1/estimates/batch", {"scenarios": [scenario]}, format="json").status_code
        == 202
    )


def test_an_item_planned_by_another_runner_is_not_planned_twice(user, scenario, monkeypatch):
    """Two runners of one batch (a lease taken over from a worker thought dead): the second finds
    the item stored and its own estimate is rolled back."""
    from integrations import batch_work
    from integrations.models import BatchItem

    monkeypatch.setattr(batches, "enqueue", lambda pk: True)
    batch = batches.create_batch(data={"scenarios": [scenario]}, owner=user, base_url="http://testserver/")
    item = BatchItem.objects.get(batch=batch)
    batch_work.plan_item(batch, item.pk, 0)
    batch_work.plan_item(batch, item.pk, 0)
    assert Estimate.objects.count() == 1 and BatchItem.objects.get().estimate == Estimate.objects.get()


def test_a_crash_planning_one_item_ends_it_with_its_reason(user, scenario, monkeypatch):
    from integrations import batch_work

    calls = []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return prepare_estimate(**kwargs)

    monkeypatch.setattr(batches, "enqueue", lambda pk: True)
    monkeypatch.setattr(batch_work, "prepare_estimate", flaky)
    batch = batches.create_batch(
        data={"scenarios": [scenario] * 3}, owner=user, base_url="http://testserver/"
    )
    assert batch_work.run(batch.pk) == "done"
    items = batches.items_of(batch)
    assert [i.status for i in items] == [201, 500, 201]
    assert (
        items[1].errors[0]["field"] == "scenarios.1"
        and "send this scenario again" in items[1].errors[0]["message"]
    )
    batch.refresh_from_db()
    assert batch.status == "done" and batch.lease_holder == ""


def test_a_lost_batch_is_queued_again_once_its_lease_expired(user, scenario, monkeypatch, settings):
    from datetime import timedelta

    from django.utils import timezone

    from integrations import batch_work

    sent = []
    monkeypatch.setattr(batches, "enqueue", lambda pk: sent.append(pk) or True)
    monkeypatch.setattr(batch_work, "enqueue", lambda pk: sent.append(pk) or True)
    batch = batches.create_batch(data={"scenarios": [scenario]}, owner=user, base_url="http://testserver/")
    assert sent == []  # queued when the transaction commits, which this test's never does
    old = timezone.now() - timedelta(seconds=settings.BATCH_STALL_S + 1)
    Batch.objects.filter(pk=batch.pk).update(
        progress_at=old, lease_expires_at=timezone.now() + timedelta(seconds=5)
    )
    assert batch_work.resume_stalled() == 0  # a live lease: its worker is on it
    Batch.objects.filter(pk=batch.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert batch_work.resume_stalled() == 1 and sent == [batch.pk]
    assert batch_work.resume_stalled() == 0  # one re-queue per stall period
    assert Batch.objects.get().requeues == 1


def test_a_batch_spends_one_request_of_the_rate_limit_per_scenario(api_client, scenario, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "anon": "5/minute"},
    }
    assert (
        api_client.post("/api/v1/estimates/batch", {"scenarios": [scenario] * 3}, format="json").status_code
        == 202
    )
    r = api_client.post("/api/v1/estimates/batch", {"scenarios": [scenario] * 3}, format="json")
    assert r.status_code == 429  # 3 + 3 > 5
    assert api_client.post("/api/v1/estimates", scenario, format="json").status_code == 201  # the 4th
    assert api_client.post("/api/v1/estimates", scenario, format="json").status_code == 201  # the 5th
    assert api_client.post("/api/v1/estimates", scenario, format="json").status_code == 429


def test_get_again_owner_only_or_by_token(user_client, other_client, api_client, scenario):
    _, body = submit(user_client, {"scenarios": [scenario]})
    again = user_client.get(body["url"]).json()
    assert again == body
    assert other_client.get(body["url"]).status_code == 404
    assert api_client.get(body["url"]).status_code == 401
    token = body["compare_url"].rstrip("/").rsplit("/", 1)[1]
    shared = api_client.get(f"/api/v1/estimates/batch/shared/{token}").json()
    assert shared["results"][0]["estimate"]["result"] == body["results"][0]["estimate"]["result"]
    assert "id" not in shared["results"][0]["estimate"] and shared["callback"] is None
    assert api_client.get("/api/v1/estimates/batch/shared/not-a-token").status_code == 404


def test_an_anonymous_batch_is_reachable_by_its_token(api_client, scenario):
    _, body = submit(api_client, {"scenarios": [scenario]})
    assert "/api/v1/estimates/batch/shared/" in body["url"] and body["status"] == "done"
    assert api_client.get(body["url"]).status_code == 200


def test_the_comparison_page_shows_every_quote_side_by_side(user_client, client, scenario):
    """Six quotes, more than the compare page's four: one column each, in order."""
    batch = [*quotes(scenario, 6), {**scenario, "cluster": {"cards": -1}}]
    _, body = submit(user_client, {"name": "RFQ", "scenarios": batch})
    page = client.get(body["compare_url"])
    assert page.status_code == 200
    html = page.content.decode()
    header = html.split('id="batch-table"')[1].split("</thead>")[0]
    assert [f"Vendor {i}" in header for i in range(6)] == [True] * 6
    assert header.index("Vendor 0") < header.index("Vendor 5")
    assert 'id="batch-refused"' in html and "scenarios.6.cluster.cards" in html
    assert "<strong>8B test plan</strong>" in html.split('id="batch-refused"')[1]
    assert client.get("/batches/nope/").status_code == 404


def test_the_excel_file_has_one_column_per_quote(user_client, client, scenario):
    _, body = submit(user_client, {"scenarios": quotes(scenario, 5)})
    r = client.get(body["xlsx_url"])
    assert r.status_code == 200 and r["Content-Type"].startswith("application/vnd.openxml")
    ws = load_workbook(io.BytesIO(r.content)).active
    header = [c.value for c in ws[1]]
    assert header[:2] == ["Item", "Unit"]
    assert header[2:] == [f"Vendor {i} (USD)" for i in range(5)]  # each column names its currency
    capex = next(row for row in ws.iter_rows(values_only=True) if row[0] == "Cluster cost")[2:]
    assert all(isinstance(v, int | float) for v in capex)
    assert list(capex) == sorted(capex) and capex[0] < capex[4]  # dearer servers cost more


def test_the_batch_endpoint_is_in_the_schema(api_client):
    schema = api_client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    op = schema["paths"]["/api/v1/estimates/batch"]["post"]
    assert op["operationId"] == "estimates_batch_create"
    assert set(op["responses"]) >= {"202", "400", "409", "429"}
    text = json.dumps(schema["components"]["schemas"]["BatchRequest"])
    assert '"maxItems": 50' in text


def test_the_comparison_page_speaks_chinese(user_client, client, scenario):
    _, body = submit(user_client, {"scenarios": [*quotes(scenario, 2), {}]})
    path = "/zh-hans" + body["compare_url"].split("testserver", 1)[1]
    html = client.get(path).content.decode()
    assert "报价对比" in html.split("</title>")[0]
    assert "同一批次中规划的 2 份报价并列对比" in html and "未规划" in html and "场景 2" in html


def test_your_batches_newest_first_and_no_one_elses(user_client, other_client, api_client, scenario):
    first = user_client.post(
        "/api/v1/estimates/batch", {"name": "one", "scenarios": [scenario]}, format="json"
    )
    second = user_client.post(
        "/api/v1/estimates/batch", {"name": "two", "scenarios": [scenario, {}]}, format="json"
    )
    listed = user_client.get("/api/v1/estimates/batch").json()
    assert [b["name"] for b in listed["results"]] == ["two", "one"]
    assert (listed["results"][0]["planned"], listed["results"][0]["failed"]) == (1, 1)
    assert listed["results"][1]["url"] == first.json()["url"] and "results" not in listed["results"][0]
    assert second.status_code == 202
    assert other_client.get("/api/v1/estimates/batch").json()["count"] == 0
    assert api_client.get("/api/v1/estimates/batch").status_code == 401


def test_the_batch_files_its_quotes_under_a_team_of_yours_only(user, user_client, scenario):
    from teams.models import Membership, Team

    mine = Team.objects.create(name="Buyers", slug="buyers")
    Team.objects.create(name="Others", slug="others")
    Membership.objects.create(user=user, team=mine)
    body = {"scenarios": [scenario, scenario]}
    refused = user_client.post("/api/v1/estimates/batch?team=others", body, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "team"
    assert not Batch.objects.exists() and not Estimate.objects.exists()
    filed, _ = submit(user_client, body, "?team=buyers")
    assert filed.status_code == 202
    assert set(Estimate.objects.values_list("team__slug", flat=True)) == {"buyers"}
    _, private = submit(user_client, body, "?team=")
    ids = [item["estimate"]["id"] for item in private["results"]]
    assert set(Estimate.objects.filter(pk__in=ids).values_list("team", flat=True)) == {None}


def test_the_comparison_page_of_a_batch_being_planned_says_so(user, client, scenario, monkeypatch):
    monkeypatch.setattr(batches, "enqueue", lambda pk: True)
    batch = batches.create_batch(
        data={"scenarios": [scenario] * 2}, owner=user, base_url="http://testserver/"
    )
    html = client.get(f"/batches/{batch.share_token}/").content.decode()
    assert "2 quotes are still being planned" in html
    assert 'id="batch-refused"' not in html and "could be planned" not in html
    zh = client.get(f"/zh-hans/batches/{batch.share_token}/").content.decode()
    assert "还有 2 份报价正在规划" in zh


def test_an_item_that_cannot_be_planned_is_ok_false_with_the_reason_and_no_figures(user_client, scenario):
    """No figure without a plan: TP 8 x PP 8 with ZeRO-3 on Megatron-Core leaves no layout (ZeRO-2/3
    does not combine with pipeline stages), so the item is refused, the rule and suggestions kept."""
    refused = {**scenario, "cluster": {"cards": 64}, "parallelism": {"tp": 8, "pp": 8, "zero_stage": 3}}
    r, body = submit(user_client, {"scenarios": [scenario, refused]})
    assert r.status_code == 202, r.content
    first, second = body["results"]
    assert first["ok"] is True and second["ok"] is False
    assert "estimate" not in second and second["status"] == 400
    (err,) = second["error"]["errors"]
    assert err["field"] == "scenarios.1.parallelism" and err["code"] == "no-possible-layout"
    assert "zero-stage-incompatible-with-pp" in err["params"]["reasons"] and err["params"]["suggestions"]
