"""The browser side: price-book pages (per object), the estimate form's book select, the report's
assumption line in English and Chinese, and the recompute notice."""

from __future__ import annotations

import pytest

from pricebooks.models import PriceBook
from reports.services import create_estimate

pytestmark = pytest.mark.django_db


def test_price_book_pages_per_object(acme_book, people, client):
    edit = f"/price-books/{acme_book.pk}/"
    assert client.get(edit).status_code == 302  # anonymous: to the sign-in page
    client.force_login(people["carol"])
    assert client.get(edit).status_code == 404
    assert client.post(edit, {"name": "x"}).status_code == 404
    assert "Negotiated" not in client.get("/price-books/").content.decode()
    client.force_login(people["bob"])
    page = client.get(edit).content.decode()
    assert "acme/negotiated" in page and 'value="80000.0"' in page


def test_editing_in_the_browser_saves_a_new_version(acme_book, people, client):
    client.force_login(people["bob"])
    form = {
        "name": "Negotiated",
        "currency": "CNY",
        "price_date": "2026-12-01",
        "servers__dgx-h100": "650000",
        "cloud__h100-sxm__on_demand": "15",
    }
    response = client.post(f"/price-books/{acme_book.pk}/", form)
    assert response.status_code == 302
    latest = acme_book.latest()
    assert latest.number == 2 and latest.currency == "CNY"
    assert latest.prices == {"servers": {"dgx-h100": 650000.0}, "cloud": {"h100-sxm": {"on_demand": 15.0}}}
    assert acme_book.versions.get(number=1).prices["electricity_per_kwh"] == 0.11


def test_a_negative_cell_is_an_error_on_that_cell(acme_book, people, client):
    client.force_login(people["bob"])
    form = {
        "name": "N",
        "currency": "USD",
        "price_date": "2026-12-01",
        "switches__" + "x": "1",
        "servers__dgx-h100": "-1",
    }
    response = client.post(f"/price-books/{acme_book.pk}/", form)
    assert response.status_code == 400
    assert acme_book.versions.count() == 1


def test_creating_a_book_in_the_browser(people, client):
    client.force_login(people["carol"])
    form = {
        "team": "rival",
        "name": "Rival list",
        "currency": "USD",
        "price_date": "2026-12-01",
        "electricity_per_kwh": "0.05",
    }
    assert client.post("/price-books/", form).status_code == 302
    book = PriceBook.objects.get()
    assert (book.reference, book.latest().prices) == ("rival/rival-list", {"electricity_per_kwh": 0.05})


def test_the_form_offers_the_teams_books_and_files_the_estimate(acme_book, people, client, scenario):
    client.force_login(people["bob"])
    page = client.get("/").content.decode()
    assert 'value="acme/negotiated"' in page
    form = {
        "model_source": "preset",
        "preset": "llama-3.1-8b",
        "accelerator": "h100-sxm",
        "server": "dgx-h100",
        "tokens": "1e11",
        "sizing": "cards",
        "cards": "64",
        "currency": "USD",
        "mfu": "0.4",
        "team": "acme",
        "price_book": "acme/negotiated",
    }
    response = client.post("/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    report = client.get(response["Location"]).content.decode()
    assert "Price book: Negotiated v1 (2026-11-01, USD)" in report


def test_the_report_names_the_book_in_chinese(acme_book, people, client, scenario):
    est = create_estimate(data={**scenario, "cost": {"price_book": "acme/negotiated"}}, owner=people["alice"])
    page = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert "价格表：Negotiated v1（2026-11-01，USD）" in page


def test_recompute_page_says_a_newer_version_exists(acme_book, people, client, scenario):
    from pricebooks.services import add_version

    est = create_estimate(data={**scenario, "cost": {"price_book": "acme/negotiated"}}, owner=people["alice"])
    page = client.get(f"/r/{est.share_token}/recompute/").content.decode()
    assert "newer-price-book" not in page
    add_version(
        user=people["bob"],
        book=acme_book,
        currency="USD",
        price_date=acme_book.latest().price_date,
        prices={},
    )
    page = client.get(f"/r/{est.share_token}/recompute/").content.decode()
    assert 'id="newer-price-book"' in page and "v2" in page
    assert "Nothing changed" in page
