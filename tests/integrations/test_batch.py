"""POST /api/v1/estimates/batch, GET it again, its comparison page and Excel file."""

import io
import json

import pytest
from openpyxl import load_workbook

from estimator import limits
from integrations import batches
from integrations.models import Batch
from reports.models import Estimate

pytestmark = pytest.mark.django_db


def quotes(scenario, n):
    """n vendor quotes: the same plan at server prices 100,000, 110,000, ... (what differs)."""
    return [
        {**scenario, "name": f"Vendor {i}", "cost": {"server_price": 100_000 + 10_000 * i}} for i in range(n)
    ]


def test_items_answer_in_order_and_one_bad_one_spoils_nothing(user_client, scenario):
    bad = {**scenario, "training": {"tokens": -5}}
    r = user_client.post(
        "/api/v1/estimates/batch", {"name": "RFQ 7", "scenarios": [scenario, bad, "nope"]}, format="json"
    )
    assert r.status_code == 201, r.content
    body = r.json()
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


def test_the_time_budget_leaves_the_rest_unplanned(user, scenario):
    ticks = iter([0.0, 1.0, limits.BATCH_SECONDS + 0.5, limits.BATCH_SECONDS + 1])  # start, then per item
    batch = batches.create_batch(
        data={"scenarios": [scenario] * 3},
        owner=user,
        base_url="http://testserver/",
        clock=lambda: next(ticks),
    )
    items = batches.items_of(batch)
    assert [i.status for i in items] == [201, 503, 503]
    assert items[1].errors[0]["field"] == "scenarios.1"
    assert Estimate.objects.count() == 1


def test_a_batch_spends_one_request_of_the_rate_limit_per_scenario(api_client, scenario, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "anon": "5/minute"},
    }
    assert (
        api_client.post("/api/v1/estimates/batch", {"scenarios": [scenario] * 3}, format="json").status_code
        == 201
    )
    r = api_client.post("/api/v1/estimates/batch", {"scenarios": [scenario] * 3}, format="json")
    assert r.status_code == 429  # 3 + 3 > 5
    assert api_client.post("/api/v1/estimates", scenario, format="json").status_code == 201  # the 4th
    assert api_client.post("/api/v1/estimates", scenario, format="json").status_code == 201  # the 5th
    assert api_client.post("/api/v1/estimates", scenario, format="json").status_code == 429


def test_get_again_owner_only_or_by_token(user_client, other_client, api_client, scenario):
    body = user_client.post("/api/v1/estimates/batch", {"scenarios": [scenario]}, format="json").json()
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
    body = api_client.post("/api/v1/estimates/batch", {"scenarios": [scenario]}, format="json").json()
    assert "/api/v1/estimates/batch/shared/" in body["url"]
    assert api_client.get(body["url"]).status_code == 200


def test_the_comparison_page_shows_every_quote_side_by_side(user_client, client, scenario):
    """Six quotes, more than the compare page's four: one column each, in order."""
    batch = [*quotes(scenario, 6), {**scenario, "cluster": {"cards": -1}}]
    body = user_client.post(
        "/api/v1/estimates/batch", {"name": "RFQ", "scenarios": batch}, format="json"
    ).json()
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
    body = user_client.post(
        "/api/v1/estimates/batch", {"scenarios": quotes(scenario, 5)}, format="json"
    ).json()
    r = client.get(body["xlsx_url"])
    assert r.status_code == 200 and r["Content-Type"].startswith("application/vnd.openxml")
    ws = load_workbook(io.BytesIO(r.content)).active
    header = [c.value for c in ws[1]]
    assert header[1:] == [f"Vendor {i}" for i in range(5)]
    capex = next(row for row in ws.iter_rows(values_only=True) if row[0] == "Cluster cost")
    assert all(isinstance(v, int | float) for v in capex[1:])
    assert list(capex[1:]) == sorted(capex[1:]) and capex[1] < capex[5]  # dearer servers cost more


def test_the_batch_endpoint_is_in_the_schema(api_client):
    schema = api_client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    op = schema["paths"]["/api/v1/estimates/batch"]["post"]
    assert op["operationId"] == "estimates_batch_create"
    assert set(op["responses"]) >= {"201", "400", "409", "429"}
    text = json.dumps(schema["components"]["schemas"]["BatchRequest"])
    assert '"maxItems": 50' in text


def test_the_comparison_page_speaks_chinese(user_client, client, scenario):
    body = user_client.post(
        "/api/v1/estimates/batch", {"scenarios": [*quotes(scenario, 2), {}]}, format="json"
    ).json()
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
    assert second.status_code == 201
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
    filed = user_client.post("/api/v1/estimates/batch?team=buyers", body, format="json")
    assert filed.status_code == 201
    assert set(Estimate.objects.values_list("team__slug", flat=True)) == {"buyers"}
    private = user_client.post("/api/v1/estimates/batch?team=", body, format="json")
    ids = [item["estimate"]["id"] for item in private.json()["results"]]
    assert set(Estimate.objects.filter(pk__in=ids).values_list("team", flat=True)) == {None}


def test_an_item_that_cannot_be_planned_is_ok_false_with_the_reason_and_no_figures(user_client, scenario):
    """No figure without a plan: TP 8 x PP 8 with ZeRO-3 on Megatron-Core leaves no layout (ZeRO-2/3
    does not combine with pipeline stages), so the item is refused, the rule and suggestions kept."""
    refused = {**scenario, "cluster": {"cards": 64}, "parallelism": {"tp": 8, "pp": 8, "zero_stage": 3}}
    r = user_client.post("/api/v1/estimates/batch", {"scenarios": [scenario, refused]}, format="json")
    assert r.status_code == 201, r.content
    first, second = r.json()["results"]
    assert first["ok"] is True and second["ok"] is False
    assert "estimate" not in second and second["status"] == 400
    (err,) = second["error"]["errors"]
    assert err["field"] == "scenarios.1.parallelism" and err["code"] == "no-possible-layout"
    assert "zero-stage-incompatible-with-pp" in err["params"]["reasons"] and err["params"]["suggestions"]
