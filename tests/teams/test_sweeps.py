"""Sweeps with teams and price books: who sees and controls a team's sweep, and a `cost.price_book`
axis whose rows differ by exactly the books' price changes (resolved at creation, stored with the
sweep: the worker never needs the user)."""

from __future__ import annotations

import datetime

import pytest

from sweeps import selectors, services
from sweeps.models import Sweep

pytestmark = pytest.mark.django_db

URL = "/api/v1/sweeps"


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch, settings):
    settings.SWEEP_CHUNK_SIZE = 50
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)


@pytest.fixture
def team_sweep(people, scenario):
    request = {"name": "cards", "base": scenario, "axes": {"efficiency.mfu": [0.35, 0.45]}}
    return services.create_sweep(data=request, owner=people["alice"])


def test_a_member_sees_the_teams_sweep_and_another_team_gets_404(team_sweep, clients):
    assert team_sweep.team.slug == "acme"
    assert clients["bob"].get(f"{URL}/{team_sweep.pk}").status_code == 200
    assert [s["id"] for s in clients["bob"].get(URL).json()] == [team_sweep.pk]
    assert clients["carol"].get(f"{URL}/{team_sweep.pk}").status_code == 404
    assert clients["carol"].get(f"{URL}/{team_sweep.pk}/results").status_code == 404
    assert clients["carol"].post(f"{URL}/{team_sweep.pk}/cancel").status_code == 404
    assert clients["carol"].get(URL).json() == []
    assert clients["anon"].get(f"{URL}/{team_sweep.pk}").status_code == 401
    assert clients["anon"].get(URL).status_code == 401


def test_a_member_may_not_cancel_or_delete_but_the_admin_may(team_sweep, clients):
    assert clients["bob"].post(f"{URL}/{team_sweep.pk}/cancel").status_code == 403
    assert clients["bob"].delete(f"{URL}/{team_sweep.pk}").status_code == 403
    team_sweep.refresh_from_db()
    assert team_sweep.is_active
    assert clients["dora"].post(f"{URL}/{team_sweep.pk}/cancel").json()["status"] == "cancelled"
    assert clients["dora"].delete(f"{URL}/{team_sweep.pk}").status_code == 204
    assert not Sweep.objects.filter(pk=team_sweep.pk).exists()


def test_a_price_book_axis_prices_each_row_with_its_book(people, scenario, acme_book):
    from pricebooks.services import create_book

    create_book(
        user=people["bob"],
        team=people["acme"],
        name="List",
        slug="list",
        currency="USD",
        price_date=datetime.date(2026, 10, 1),
        prices={"servers": {"dgx-h100": 95_000}},
    )
    request = {
        "name": "books",
        "base": scenario,
        "axes": {"cost.price_book": ["acme/negotiated", "acme/list"]},
    }
    sweep = services.create_sweep(data=request, owner=people["alice"])
    assert set(sweep.price_books) == {"acme/negotiated", "acme/list"}
    assert [services.run_chunk(sweep_id=sweep.pk, index=i) for i in range(sweep.chunks_total)] == ["stored"]
    sweep.refresh_from_db()
    page = selectors.result_page(sweep=sweep, page=1, page_size=10)
    capex = [dict(zip(page["columns"], row, strict=True))["cost.capex.compute"] for row in page["rows"]]
    # 8 nodes x (95,000 - 80,000) of chassis between the two books
    assert capex[1] - capex[0] == pytest.approx(8 * 15_000)
    status = selectors.status_payload(sweep=sweep)
    assert status["price_books"]["acme/list"]["version"] == 1


def test_a_sweep_naming_another_teams_book_is_refused_on_its_field(people, scenario, acme_book):
    from estimator.errors import ScenarioError

    base = {**scenario, "cost": {"price_book": "acme/negotiated"}}
    with pytest.raises(ScenarioError) as exc:
        services.create_sweep(data={"base": base, "axes": {"efficiency.mfu": [0.4]}}, owner=people["carol"])
    assert exc.value.errors[0].field == "base.cost.price_book"
    with pytest.raises(ScenarioError) as exc:
        services.create_sweep(
            data={"base": scenario, "axes": {"cost.price_book": ["acme/negotiated"]}}, owner=people["carol"]
        )
    assert exc.value.errors[0].field == "axes.cost.price_book"


def test_the_sweep_pages_cancel_button_is_for_the_owner_and_team_admins(team_sweep, people, client):
    cancel = f"/sweeps/{team_sweep.share_token}/cancel"
    for name in ("bob", "carol"):
        client.force_login(people[name])
        assert client.post(cancel).status_code == 404
    team_sweep.refresh_from_db()
    assert team_sweep.is_active
    client.force_login(people["dora"])
    assert client.post(cancel).status_code == 302
    team_sweep.refresh_from_db()
    assert team_sweep.status == "cancelled"


def test_the_sweeps_page_lists_the_teams_sweeps(team_sweep, people, client):
    client.force_login(people["bob"])
    assert team_sweep.share_token in client.get("/sweeps/").content.decode()
    client.force_login(people["carol"])
    assert team_sweep.share_token not in client.get("/sweeps/").content.decode()
