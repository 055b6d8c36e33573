"""Django admin: a price-book version added there is numbered after the last and checked by the
core; a saved one is read-only."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db

ADD = "/admin/pricebooks/pricebookversion/add/"


def test_admin_adds_the_next_version(admin_client, acme_book):
    form = {
        "book": acme_book.pk,
        "currency": "USD",
        "price_date": "2026-12-02",
        "prices": json.dumps({"drives": {"hdd-24tb": 300}}),
    }
    assert admin_client.post(ADD, form).status_code == 302
    latest = acme_book.latest()
    assert (latest.number, latest.prices) == (2, {"drives": {"hdd-24tb": 300.0}})


def test_admin_refuses_an_unknown_id(admin_client, acme_book):
    form = {
        "book": acme_book.pk,
        "currency": "USD",
        "price_date": "2026-12-02",
        "prices": json.dumps({"drives": {"floppy": 1}}),
    }
    response = admin_client.post(ADD, form)
    # at the id, in the reader's language through its code (unknown-catalog-id)
    assert response.status_code == 200
    assert "prices.drives.floppy: floppy is not an id of the catalog" in response.content.decode()
    assert acme_book.versions.count() == 1


def test_a_saved_version_is_read_only_in_the_admin(admin_client, acme_book):
    version = acme_book.versions.get()
    page = admin_client.get(f"/admin/pricebooks/pricebookversion/{version.pk}/change/").content.decode()
    assert 'name="prices"' not in page
