"""Project-level checks: migrations match the models; production settings pass check --deploy."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_makemigrations_is_clean():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_deploy_check_has_no_warnings(tmp_path):
    env = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "ALLOWED_HOSTS": "example.com",
        "CLUSTERPLAN_VAR_DIR": str(tmp_path),
    }
    for name in ("SECURE_HTTPS", "DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL"):
        env.pop(name, None)
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


@pytest.mark.django_db
def test_sqlite_commits_wait_for_the_disk():
    """config.settings: journal_mode WAL and synchronous FULL (2) on every SQLite connection: a commit
    waits for an fsync, so an answered estimate survives a power loss (NORMAL, 1, would not)."""
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite settings only")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        journal = cursor.fetchone()[0]
        cursor.execute("PRAGMA synchronous")
        synchronous = cursor.fetchone()[0]
    assert (journal, synchronous) == ("wal", 2)
