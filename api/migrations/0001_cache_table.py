"""The database cache table (settings.CACHES when no Redis is configured): made by `migrate`, so
throttle counters are shared by every process from the first run."""

from django.core.management import call_command
from django.db import migrations

CACHE_TABLE = "clusterplan_cache"  # settings.CACHES LOCATION of the database cache


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", CACHE_TABLE, database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = []

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
