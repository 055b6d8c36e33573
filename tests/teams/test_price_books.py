"""Price books through the API and in estimates: visibility by team, versions that never change,
quotes that differ from the catalog's by exactly the price changes, and the stored version."""

from __future__ import annotations

import pytest

from estimator.plan.compose import estimate as core_estimate
from pricebooks.models import ImmutableVersionError, PriceBookVersion

pytestmark = pytest.mark.django_db

BOOKS = "/api/v1/price-books"
ESTIMATES = "/api/v1/estimates"


def version_body(server_price: float, electricity: float = 0.11) -> dict:
    return {
        "currency": "USD",
        "price_date": "2026-12-01",
        "prices": {"servers": {"dgx-h100": server_price}, "electricity_per_kwh": electricity},
    }


# -- the API's per-object authorization ----------------------------------------------------------


def test_members_list_and_read_their_teams_books(acme_book, clients):
    listed = clients["bob"].get(BOOKS).json()
    assert [b["reference"] for b in listed] == ["acme/negotiated"]
    body = clients["bob"].get(f"{BOOKS}/{acme_book.pk}").json()
    assert body["latest"]["version"] == 1
    assert body["latest"]["prices"] == {"servers": {"dgx-h100": 80000.0}, "electricity_per_kwh": 0.11}


def test_another_team_gets_404_and_an_empty_list(acme_book, clients):
    assert clients["carol"].get(BOOKS).json() == []
    for response in (
        clients["carol"].get(f"{BOOKS}/{acme_book.pk}"),
        clients["carol"].put(f"{BOOKS}/{acme_book.pk}", version_body(1), format="json"),
        clients["carol"].get(f"{BOOKS}/{acme_book.pk}/versions"),
        clients["carol"].post(f"{BOOKS}/{acme_book.pk}/versions", version_body(1), format="json"),
        clients["carol"].get(f"{BOOKS}/{acme_book.pk}/versions/1"),
    ):
        assert response.status_code == 404
    assert acme_book.versions.count() == 1


def test_anonymous_gets_401(acme_book, clients):
    for response in (
        clients["anon"].get(BOOKS),
        clients["anon"].post(BOOKS, {}, format="json"),
        clients["anon"].get(f"{BOOKS}/{acme_book.pk}"),
        clients["anon"].get(f"{BOOKS}/{acme_book.pk}/versions"),
    ):
        assert response.status_code == 401


def test_create_then_edit_adds_a_version_and_keeps_the_first(people, clients):
    created = clients["bob"].post(
        BOOKS, {"team": "acme", "name": "List 2027", **version_body(75_000)}, format="json"
    )
    assert created.status_code == 201, created.content
    book = created.json()
    assert (book["reference"], book["latest"]["version"]) == ("acme/list-2027", 1)
    edited = clients["alice"].put(f"{BOOKS}/{book['id']}", version_body(90_000), format="json")
    assert edited.status_code == 200 and edited.json()["latest"]["version"] == 2
    versions = clients["alice"].get(f"{BOOKS}/{book['id']}/versions").json()
    assert [(v["version"], v["prices"]["servers"]["dgx-h100"]) for v in versions] == [
        (2, 90000.0),
        (1, 75000.0),
    ]
    assert versions[0]["created_by"] == "alice" and versions[1]["created_by"] == "bob"


def test_a_saved_version_refuses_to_change(acme_book):
    version = acme_book.versions.get()
    version.prices = {}
    with pytest.raises(ImmutableVersionError):
        version.save()
    assert PriceBookVersion.objects.get(pk=version.pk).prices["servers"] == {"dgx-h100": 80000.0}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"team": "acme", "name": "x", "price_date": "2026-12-01", "prices": {"switches": {"nope": 1}}},
            "prices.switches.nope",  # at the id the catalog does not know
        ),
        (
            {
                "team": "acme",
                "name": "x",
                "price_date": "2026-12-01",
                "prices": {"servers": {"dgx-h100": -5}},
            },
            "prices.servers.dgx-h100",
        ),
        ({"team": "acme", "name": "x", "price_date": "someday", "prices": {}}, "price_date"),
        ({"team": "rival", "name": "x", "price_date": "2026-12-01", "prices": {}}, "team"),
        ({"team": "acme", "name": "x", "price_date": "2026-12-01", "prices": [1]}, "prices"),
    ],
)
def test_bad_books_are_400_with_the_field_path(people, clients, body, field):
    response = clients["alice"].post(BOOKS, body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field


def test_teams_endpoint_lists_my_teams_and_role(people, clients):
    url = "http://testserver/api/v1/teams/"
    assert clients["dora"].get("/api/v1/teams").json() == [
        {"slug": "acme", "name": "Acme", "role": "admin", "url": url + "acme"}
    ]
    assert clients["carol"].get("/api/v1/teams").json() == [
        {"slug": "rival", "name": "Rival", "role": "member", "url": url + "rival"}
    ]
    assert clients["anon"].get("/api/v1/teams").status_code == 401


# -- quotes with a book ---------------------------------------------------------------------------


def test_a_quote_with_the_teams_book_differs_by_exactly_the_price_changes(acme_book, scenario, clients):
    default = core_estimate(scenario)["result"]
    body = clients["bob"].post(
        ESTIMATES, {**scenario, "cost": {"price_book": "acme/negotiated"}}, format="json"
    )
    assert body.status_code == 201, body.content
    result = body.json()["result"]
    # 8 DGX H100 nodes x (80,000 - 70,000) USD of chassis
    assert result["cost"]["capex"]["compute"] - default["cost"]["capex"]["compute"] == pytest.approx(80_000)
    # the run's facility energy in kWh x (0.11 - 0.08) USD/kWh
    kwh = default["power"]["facility_w"] * default["power"]["hours"] / 1000
    energy = (
        result["cost"]["run"]["owned_breakdown"]["energy"]
        - default["cost"]["run"]["owned_breakdown"]["energy"]
    )
    assert energy == pytest.approx(kwh * 0.03, rel=1e-9)
    assert body.json()["price_book"] == {
        "name": "Negotiated",
        "version": 1,
        "price_date": "2026-11-01",
        "currency": "USD",
    }
    row = next(a for a in result["assumptions"] if a["code"] == "assumption.price-book")
    assert row["params"]["version"] == 1


def test_a_stored_report_keeps_its_book_version_after_the_book_is_edited(acme_book, scenario, clients):
    created = clients["alice"].post(
        ESTIMATES, {**scenario, "cost": {"price_book": "acme/negotiated"}}, format="json"
    )
    stored = created.json()
    clients["alice"].put(f"{BOOKS}/{acme_book.pk}", version_body(120_000), format="json")
    again = clients["alice"].get(f"{ESTIMATES}/{stored['id']}").json()
    assert again["price_book"]["version"] == 1
    assert again["result"]["cost"]["capex"] == stored["result"]["cost"]["capex"]
    # recompute keeps v1 (nothing changed) and says that v2 exists
    token = stored["share_url"].rstrip("/").rsplit("/", 1)[-1]
    recomputed = clients["anon"].get(f"/api/v1/reports/{token}/recompute").json()
    assert recomputed["errors"] is None
    assert recomputed["result"]["cost"]["capex"] == stored["result"]["cost"]["capex"]
    assert recomputed["price_book"]["version"] == 1
    assert recomputed["newer_price_book"]["version"] == 2
    # a new estimate takes the latest version: 8 nodes x (120,000 - 80,000) more
    latest = clients["alice"].post(
        ESTIMATES, {**scenario, "cost": {"price_book": "acme/negotiated"}}, format="json"
    )
    delta = latest.json()["result"]["cost"]["capex"]["compute"] - stored["result"]["cost"]["capex"]["compute"]
    assert delta == pytest.approx(8 * 40_000)
    pinned = clients["alice"].post(
        ESTIMATES, {**scenario, "cost": {"price_book": "acme/negotiated@1"}}, format="json"
    )
    assert pinned.json()["result"]["cost"]["capex"] == stored["result"]["cost"]["capex"]


@pytest.mark.parametrize("who", ["carol", "anon"])
def test_a_book_of_another_team_is_a_400_on_cost_price_book(acme_book, scenario, clients, who):
    response = clients[who].post(
        ESTIMATES, {**scenario, "cost": {"price_book": "acme/negotiated"}}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "cost.price_book"


def test_a_missing_version_is_a_400(acme_book, scenario, clients):
    response = clients["alice"].post(
        ESTIMATES, {**scenario, "cost": {"price_book": "acme/negotiated@7"}}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "cost.price_book", "message": "price book 'acme/negotiated' has no version 7"}
    ]


def test_explicit_scenario_prices_still_win(acme_book, scenario, clients):
    body = {**scenario, "cost": {"price_book": "acme/negotiated", "server_price": 300_000}}
    result = clients["alice"].post(ESTIMATES, body, format="json").json()["result"]
    assert result["cost"]["capex"]["compute"] == pytest.approx(8 * 300_000)
