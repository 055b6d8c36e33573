"""Tokens issued by DRF's authtoken (before named tokens) become named tokens, stored hashed, and
their plaintext rows are deleted. The DRF app is no longer installed, so its table is read with
SQL when an older database still has it; a new database has none and this does nothing."""

import datetime as dt

from django.db import migrations
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from accounts import keys

LEGACY_TABLE = "authtoken_token"
LEGACY_NAME = "API token (issued before named tokens)"


def _aware(created):
    """The legacy row's creation time as an aware datetime (SQLite gives it naive, in UTC)."""
    if isinstance(created, str):
        created = parse_datetime(created)
    if created is None:
        return timezone.now()
    return created.replace(tzinfo=dt.timezone.utc) if timezone.is_naive(created) else created


def import_drf_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if LEGACY_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("accounts", "ApiToken")
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {q('key')}, {q('user_id')}, {q('created')} FROM {q(LEGACY_TABLE)}")
        rows = cursor.fetchall()
        ApiToken.objects.bulk_create(
            ApiToken(
                user_id=user_id,
                name=LEGACY_NAME,
                prefix=keys.prefix_of(key),
                key_hash=keys.digest(key),
                created_at=_aware(created),
            )
            for key, user_id, created in rows
        )
        cursor.execute(f"DELETE FROM {q(LEGACY_TABLE)}")  # no plaintext secret stays behind


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [migrations.RunPython(import_drf_tokens, migrations.RunPython.noop)]
