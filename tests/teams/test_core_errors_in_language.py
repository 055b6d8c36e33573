"""The price-book and team pages say the core's refusals in the reader's language through their
code + params (reports.messages, registered as api.field_text), as the estimate form does; the
API keeps the English message with the code beside it. Limits from estimator.contract.price_book:
electricity_per_kwh <= 100, a price <= 1e10."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import translation

from estimator.contract.price_book import parse_prices
from estimator.errors import FieldError, ScenarioError
from teams.forms import TeamForm

pytestmark = pytest.mark.django_db

BOOK = {"team": "acme", "name": "B", "currency": "USD", "price_date": "2026-01-01"}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _errors(html: str) -> str:
    return " ".join(re.findall(r'class="[^"]*error[^"]*"[^>]*>(.*?)</', html, re.S))


def _refusal(data: dict) -> FieldError:
    with pytest.raises(ScenarioError) as info:
        parse_prices(data)
    (err,) = info.value.errors
    return err


def test_the_core_codes_a_price_books_range_unknown_id_and_stray_key():
    err = _refusal({"electricity_per_kwh": 500})
    assert (err.field, err.code, err.params) == (
        "prices.electricity_per_kwh",
        "must-be-at-most",
        {"limit": 100},
    )
    err = _refusal({"switches": {"nope": 1}})
    assert (err.field, err.code, err.params) == (
        "prices.switches.nope",
        "unknown-catalog-id",
        {"kind": "switches", "id": "nope"},
    )
    assert _refusal({"gpus": {}}).code == "not-a-price-book-field"


@pytest.mark.parametrize(
    ("lang", "said", "not_said"),
    [("/zh-hans", "不能大于 100", "input should be"), ("", "must be at most 100", "input should be")],
)
def test_the_price_book_form_says_the_cores_limit_in_the_readers_language(people, lang, said, not_said):
    page = _client(people["alice"]).post(f"{lang}/price-books/", {**BOOK, "electricity_per_kwh": "500"})
    assert page.status_code == 400
    errors = _errors(page.content.decode())
    assert said in errors and not_said not in errors


def test_editing_a_book_says_the_cores_limit_in_chinese(people):
    alice = _client(people["alice"])
    created = alice.post("/price-books/", BOOK)
    assert created.status_code == 302
    page = alice.post(f"/zh-hans{created['Location']}", {**BOOK, "electricity_per_kwh": "101"})
    assert page.status_code == 400 and "不能大于 100" in _errors(page.content.decode())


def test_a_team_form_says_a_coded_refusal_in_chinese():
    form = TeamForm({"name": "x"})
    assert form.is_valid()
    refusal = ScenarioError(
        FieldError("name", "input should be less than or equal to 3", "must-be-at-most", {"limit": 3})
    )
    with translation.override("zh-hans"):
        form.add_core_errors(refusal)
        assert form.errors["name"] == ["不能大于 3"]


def test_a_missing_book_in_the_estimate_form_is_said_in_chinese(people):
    from tests.web.test_pages import FORM

    form = {**FORM, "extra": '{"cost": {"price_book": "acme/nothing"}}'}
    page = _client(people["alice"]).post("/zh-hans/", form)
    assert page.status_code == 400
    html = page.content.decode()
    assert "你所在团队的价格表中没有“acme/nothing”" in html and "among your teams" not in html


def test_a_malformed_reference_keeps_its_code_in_the_api(people):
    from tests.teams.conftest import token_client

    body = {"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e11}, "cluster": {"cards": 64}}
    body["cost"] = {"price_book": "Not A Ref"}
    response = token_client(people["alice"]).post("/api/v1/estimates", body, format="json")
    assert response.status_code == 400
    (err,) = response.json()["errors"]
    assert (err["field"], err["code"]) == ("cost.price_book", "must-be-book-reference")
    assert err["message"].startswith("must be '<team>/<book>'")  # the API's English message
