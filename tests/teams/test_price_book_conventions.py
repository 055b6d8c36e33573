"""Price books and the API's conventions: Location on 201, PUT that files nothing when nothing
changed (and says so), Idempotency-Key on PUT, ETag and 304 on a version (it never changes)."""

from __future__ import annotations

import pytest

from pricebooks.models import PriceBookVersion

pytestmark = pytest.mark.django_db

BOOKS = "/api/v1/price-books"
SAME = {
    "currency": "USD",
    "price_date": "2026-11-01",
    "prices": {"electricity_per_kwh": 0.11, "servers": {"dgx-h100": 80000}},
}


def test_a_new_book_and_a_new_version_have_a_location(clients, people):
    body = {"team": "acme", "name": "Vendor A", **SAME}
    created = clients["alice"].post(BOOKS, body, format="json")
    assert created.status_code == 201
    assert created["Location"] == f"http://testserver/api/v1/price-books/{created.json()['id']}"
    version = clients["alice"].post(
        f"{created['Location']}/versions", {**SAME, "price_date": "2026-12-01"}, format="json"
    )
    assert version.status_code == 201 and version["Location"] == f"{created['Location']}/versions/2"
    assert clients["alice"].get(version["Location"]).json()["version"] == 2


def test_put_with_the_same_content_files_nothing_and_says_so(clients, acme_book):
    url = f"{BOOKS}/{acme_book.pk}"
    same = clients["bob"].put(url, SAME, format="json")  # the same prices, keys in another order
    assert same.status_code == 200
    assert same.json()["version_created"] is False and same.json()["latest"]["version"] == 1
    assert PriceBookVersion.objects.filter(book=acme_book).count() == 1
    changed = clients["bob"].put(url, {**SAME, "prices": {"servers": {"dgx-h100": 79000}}}, format="json")
    assert changed.json()["version_created"] is True and changed.json()["latest"]["version"] == 2
    assert PriceBookVersion.objects.filter(book=acme_book).count() == 2


def test_put_honours_the_idempotency_key(clients, acme_book):
    url = f"{BOOKS}/{acme_book.pk}"
    key = {"HTTP_IDEMPOTENCY_KEY": "put-vendor-a-2026-12"}
    body = {**SAME, "prices": {"servers": {"dgx-h100": 79000}}}
    first = clients["bob"].put(url, body, format="json", **key)
    again = clients["bob"].put(url, body, format="json", **key)
    assert first.json() == again.json() and again["Idempotent-Replayed"] == "true"
    other = clients["bob"].put(url, SAME, format="json", **key)
    assert other.status_code == 409 and other.json()["errors"][0]["field"] == "Idempotency-Key"


def test_a_version_has_an_etag_and_answers_304(clients, acme_book):
    url = f"{BOOKS}/{acme_book.pk}/versions/1"
    first = clients["bob"].get(url)
    assert first.status_code == 200 and first["ETag"]
    assert clients["bob"].get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    # someone outside the team learns nothing, not even with a guessed ETag
    assert clients["carol"].get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 404
