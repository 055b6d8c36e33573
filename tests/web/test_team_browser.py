"""Team pages in headless Chromium, with JavaScript off, in English then Chinese: follow the menu to
"Teams", create a team, add a member by email, make them admin. Set CLUSTERPLAN_SCREENSHOTS to a
directory to keep the pages' screenshots (docs/screenshots: teams-en.png, teams-zh.png)."""

import os
from pathlib import Path

import pytest

from teams.models import Membership

from .test_browser import browser  # noqa: F401  (the shared Chromium fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("CLUSTERPLAN_SCREENSHOTS")


def _shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_create_a_team_add_a_member_and_change_a_role_in_english_and_chinese(
    browser,  # noqa: F811 - the fixture imported above
    live_server,
    django_user_model,
):
    django_user_model.objects.create_user("carol", password="carol-password-1")
    django_user_model.objects.create_user("erin", email="erin@example.com")
    context = browser.new_context(locale="en-US", java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "carol")
    page.fill("input[name=password]", "carol-password-1")
    page.click("form.estimate-form button[type=submit]")
    page.wait_for_url("**/estimates/")

    page.click("header.site nav >> text=Teams")
    page.wait_for_url("**/teams/")
    page.fill("input[name=name]", "Procurement")
    page.click("text=Create the team")
    page.wait_for_url("**/teams/procurement/")
    assert "You are its admin" in page.inner_text("main")
    page.fill("input[name=user]", "erin@example.com")
    page.click("text=Add the member")
    page.wait_for_url("**/teams/procurement/")
    page.select_option("#member-erin select[name=role]", "admin")
    page.click("#member-erin >> text=Change role")
    page.wait_for_url("**/teams/procurement/")
    assert Membership.objects.get(team__slug="procurement", user__username="erin").role == "admin"
    _shot(page, "teams-en")

    page.goto(f"{live_server.url}/zh-hans/teams/procurement/")
    main = page.inner_text("main")
    assert "成员" in main and "添加成员" in main and "更改角色" in main
    _shot(page, "teams-zh")
    context.close()
