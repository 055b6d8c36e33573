"""Teams and memberships through the API: anyone signed in creates a team and is its admin; only
admins add members (by username or email), change roles and remove members; a team keeps an
admin; a team you are not in is 404, as if it did not exist."""

from __future__ import annotations

import pytest

from teams.models import Membership, Team

pytestmark = pytest.mark.django_db

TEAMS = "/api/v1/teams"


def test_a_new_team_has_its_creator_as_admin_and_a_location(clients, people):
    r = clients["carol"].post(TEAMS, {"name": "Procurement"}, format="json")
    assert r.status_code == 201
    assert r["Location"] == "http://testserver/api/v1/teams/procurement" == r.json()["url"]
    assert r.json()["members"] == [
        {
            "username": "carol",
            "role": "admin",
            "url": "http://testserver/api/v1/teams/procurement/members/carol",
        }
    ]
    assert Membership.objects.get(team__slug="procurement").user == people["carol"]
    slugs = [t["slug"] for t in clients["carol"].get(TEAMS).json()]
    assert slugs == ["procurement", "rival"]  # ordered by name


def test_a_taken_slug_is_a_400_on_slug(clients, people):
    r = clients["carol"].post(TEAMS, {"name": "Mine", "slug": "acme"}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "slug"
    assert not Membership.objects.filter(user=people["carol"], team__slug="acme").exists()


def test_an_admin_adds_a_member_by_username_or_by_email(clients, people, django_user_model):
    django_user_model.objects.create_user("erin", email="Erin@Example.com")
    by_name = clients["dora"].post(f"{TEAMS}/acme/members", {"user": "carol"}, format="json")
    assert by_name.status_code == 201 and by_name.json()["role"] == "member"
    assert by_name["Location"] == "http://testserver/api/v1/teams/acme/members/carol"
    by_email = clients["dora"].post(
        f"{TEAMS}/acme/members", {"user": "erin@example.com", "role": "admin"}, format="json"
    )
    assert by_email.status_code == 201 and by_email.json()["username"] == "erin"
    assert Membership.objects.get(team__slug="acme", user__username="erin").role == "admin"
    again = clients["dora"].post(f"{TEAMS}/acme/members", {"user": "carol"}, format="json")
    assert again.status_code == 400 and again.json()["errors"][0]["field"] == "user"
    nobody = clients["dora"].post(f"{TEAMS}/acme/members", {"user": "zed@example.com"}, format="json")
    assert nobody.status_code == 400 and nobody.json()["errors"][0]["field"] == "user"


def test_a_member_who_is_not_admin_gets_403_and_an_outsider_404(clients):
    assert clients["bob"].post(f"{TEAMS}/acme/members", {"user": "carol"}, format="json").status_code == 403
    assert (
        clients["bob"].patch(f"{TEAMS}/acme/members/alice", {"role": "admin"}, format="json").status_code
        == 403
    )
    for response in (
        clients["carol"].get(f"{TEAMS}/acme"),
        clients["carol"].post(f"{TEAMS}/acme/members", {"user": "carol"}, format="json"),
        clients["carol"].delete(f"{TEAMS}/acme/members/bob"),
        clients["anon"].get(f"{TEAMS}/acme"),
    ):
        assert response.status_code in (401, 404)
        assert response.json()["errors"]
    assert not Membership.objects.filter(team__slug="acme", user__username="carol").exists()


def test_roles_change_but_a_team_keeps_an_admin(clients):
    up = clients["dora"].patch(f"{TEAMS}/acme/members/bob", {"role": "admin"}, format="json")
    assert up.status_code == 200 and up.json()["role"] == "admin"
    down = clients["bob"].patch(f"{TEAMS}/acme/members/dora", {"role": "member"}, format="json")
    assert down.status_code == 200
    last = clients["bob"].patch(f"{TEAMS}/acme/members/bob", {"role": "member"}, format="json")
    assert last.status_code == 400 and last.json()["errors"][0]["field"] == "role"
    assert clients["bob"].delete(f"{TEAMS}/acme/members/bob").status_code == 400
    assert clients["bob"].delete(f"{TEAMS}/acme/members/alice").status_code == 204
    team = Team.objects.get(slug="acme")
    assert sorted(m.user.username for m in team.memberships.all()) == ["bob", "dora"]
    detail = clients["dora"].get(f"{TEAMS}/acme").json()
    assert detail["role"] == "member" and [m["role"] for m in detail["members"]] == ["admin", "member"]


def test_a_bad_role_is_a_400_on_role(clients):
    r = clients["dora"].patch(f"{TEAMS}/acme/members/bob", {"role": "owner"}, format="json")
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "role"
