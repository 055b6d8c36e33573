"""Tokens issued by DRF's authtoken before named tokens keep working after the data migration
(accounts/migrations/0002), and their plaintext rows are gone."""

import datetime as dt
import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection
from rest_framework.test import APIClient

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db
LEGACY_KEY = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # DRF's documented example key
# the migration reads only the editor's connection; a real schema editor cannot open inside the
# test's transaction on SQLite
_EDITOR = SimpleNamespace(connection=connection)
ISSUED = dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC)


def _legacy_table(user) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            'CREATE TABLE "authtoken_token" ("key" varchar(40) PRIMARY KEY, "created" timestamp with time zone'
            ' NOT NULL, "user_id" integer NOT NULL)'
        )
        cursor.execute(
            'INSERT INTO "authtoken_token" ("key", "created", "user_id") VALUES (%s, %s, %s)',
            [LEGACY_KEY, ISSUED, user.pk],
        )


def test_a_drf_token_keeps_working_after_the_migration(user):
    _legacy_table(user)
    migration = importlib.import_module("accounts.migrations.0002_import_drf_tokens")
    migration.import_drf_tokens(apps, _EDITOR)

    token = ApiToken.objects.get(user=user)
    assert token.prefix == "9944b09199c6"
    assert token.name == "API token (issued before named tokens)"
    assert token.created_at == ISSUED  # kept, not the time of the migration
    with connection.cursor() as cursor:
        cursor.execute('SELECT COUNT(*) FROM "authtoken_token"')
        assert cursor.fetchone()[0] == 0  # no plaintext left behind
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {LEGACY_KEY}")
    assert client.get("/api/v1/estimates").status_code == 200


def test_without_the_legacy_table_the_migration_does_nothing(user):
    migration = importlib.import_module("accounts.migrations.0002_import_drf_tokens")
    migration.import_drf_tokens(apps, _EDITOR)
    assert not ApiToken.objects.exists()
