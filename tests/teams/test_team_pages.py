"""Team pages in English and Chinese: create a team, add a member by username or email, change a
role; only admins see the forms; a team you are not in is 404."""

from __future__ import annotations

import pytest
from django.test import Client

from teams.models import Membership

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_create_a_team_and_add_a_member_by_email(people, django_user_model):
    django_user_model.objects.create_user("erin", email="erin@example.com")
    carol = _client(people["carol"])
    created = carol.post("/teams/", {"name": "Procurement", "slug": ""})
    assert created.status_code == 302 and created["Location"] == "/teams/procurement/"
    page = carol.get("/teams/procurement/").content.decode()
    assert "Add a member" in page and "carol" in page
    added = carol.post("/teams/procurement/", {"user": "erin@example.com", "role": "member"})
    assert added.status_code == 302
    assert Membership.objects.get(team__slug="procurement", user__username="erin").role == "member"
    changed = carol.post("/teams/procurement/members/erin/role", {"role": "admin"})
    assert changed.status_code == 302
    assert Membership.objects.get(team__slug="procurement", user__username="erin").role == "admin"


def test_an_unknown_account_is_shown_on_its_field(people):
    page = _client(people["dora"]).post("/teams/acme/", {"user": "nobody", "role": "member"})
    assert page.status_code == 400
    assert "no account with the username or email" in page.content.decode()


def test_members_see_no_forms_and_outsiders_get_404(people):
    bob = _client(people["bob"])
    page = bob.get("/teams/acme/").content.decode()
    assert "Add a member" not in page and "Only the team's admins add members" in page
    assert bob.post("/teams/acme/members/alice/role", {"role": "admin"}).status_code == 404
    assert Membership.objects.get(team__slug="acme", user__username="alice").role == "member"
    assert _client(people["carol"]).get("/teams/acme/").status_code == 404


def test_the_pages_speak_chinese(people):
    dora = _client(people["dora"])
    index = dora.get("/zh-hans/teams/").content.decode()
    assert "创建团队" in index
    detail = dora.get("/zh-hans/teams/acme/").content.decode()
    assert "添加成员" in detail and "更改角色" in detail
