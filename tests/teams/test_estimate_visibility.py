"""Per-object authorization of the estimate endpoints and pages with teams: the owner, a member
of the same team, an admin of it, a user of another team (404, existence not disclosed), anonymous."""

from __future__ import annotations

import pytest

from reports.models import Estimate
from reports.services import create_estimate

pytestmark = pytest.mark.django_db

URL = "/api/v1/estimates"


@pytest.fixture
def team_estimate(people, scenario):
    """alice's estimate, filed under acme (her only team: the default)."""
    return create_estimate(data=scenario, owner=people["alice"])


def test_an_estimate_goes_to_the_owners_only_team_by_default(team_estimate, people):
    assert team_estimate.team == people["acme"]


def test_a_second_member_of_the_team_sees_the_estimate(team_estimate, clients):
    detail = clients["bob"].get(f"{URL}/{team_estimate.pk}")
    assert detail.status_code == 200
    assert detail.json()["team"] == "acme"
    listed = clients["bob"].get(URL).json()["results"]
    assert [e["id"] for e in listed] == [team_estimate.pk]


def test_a_user_of_another_team_gets_404(team_estimate, clients):
    response = clients["carol"].get(f"{URL}/{team_estimate.pk}")
    assert response.status_code == 404
    assert response.json() == {"errors": [{"field": "", "message": "Not found."}]}
    assert clients["carol"].get(URL).json()["results"] == []
    assert clients["carol"].delete(f"{URL}/{team_estimate.pk}").status_code == 404
    assert Estimate.objects.filter(pk=team_estimate.pk).exists()


def test_anonymous_gets_401_on_list_detail_and_delete(team_estimate, clients):
    for response in (
        clients["anon"].get(URL),
        clients["anon"].get(f"{URL}/{team_estimate.pk}"),
        clients["anon"].delete(f"{URL}/{team_estimate.pk}"),
    ):
        assert response.status_code == 401
        assert response.json()["errors"][0]["field"] == ""


def test_a_plain_member_may_not_delete_the_team_estimate(team_estimate, clients):
    response = clients["bob"].delete(f"{URL}/{team_estimate.pk}")
    assert response.status_code == 403
    assert response.json()["errors"][0]["field"] == ""
    assert Estimate.objects.filter(pk=team_estimate.pk).exists()


def test_a_team_admin_may_delete_it(team_estimate, clients):
    assert clients["dora"].delete(f"{URL}/{team_estimate.pk}").status_code == 204
    assert not Estimate.objects.filter(pk=team_estimate.pk).exists()


def test_the_owner_may_delete_it(team_estimate, clients):
    assert clients["alice"].delete(f"{URL}/{team_estimate.pk}").status_code == 204


def test_a_private_estimate_stays_the_owners(people, scenario, clients):
    response = clients["alice"].post(f"{URL}?team=", scenario, format="json")
    assert response.status_code == 201 and response.json()["team"] is None
    pk = response.json()["id"]
    assert clients["bob"].get(f"{URL}/{pk}").status_code == 404
    assert clients["alice"].get(f"{URL}/{pk}").status_code == 200


def test_choosing_a_team_one_is_not_in_is_a_400_on_team(people, scenario, clients):
    response = clients["alice"].post(f"{URL}?team=rival", scenario, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "team"
    assert not Estimate.objects.exists()


def test_with_two_teams_and_no_choice_the_estimate_is_private(people, scenario, clients):
    from teams.models import Membership

    Membership.objects.create(user=people["alice"], team=people["rival"])
    body = clients["alice"].post(URL, scenario, format="json").json()
    assert body["team"] is None
    body = clients["alice"].post(f"{URL}?team=rival", scenario, format="json").json()
    assert body["team"] == "rival"
    assert clients["carol"].get(f"{URL}/{body['id']}").status_code == 200


def test_the_share_link_still_works_for_anyone(team_estimate, clients):
    assert clients["anon"].get(f"/api/v1/reports/{team_estimate.share_token}").status_code == 200


def test_my_estimates_page_lists_the_teams_estimates(team_estimate, people, client):
    client.force_login(people["bob"])
    assert team_estimate.name in client.get("/estimates/").content.decode()
    client.force_login(people["carol"])
    assert team_estimate.name not in client.get("/estimates/").content.decode()
