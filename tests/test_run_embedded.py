"""scripts/run_embedded.py --gunicorn serves with production's gunicorn configuration: gunicorn
itself, asked to print the configuration the embedded command gives it, reports config/gunicorn.py's
threaded workers and 60 s timeout (not gunicorn's defaults: sync workers, 30 s), and the address of
--host/--port."""

import subprocess
import sys
from pathlib import Path

from scripts.run_embedded import WORKERS, server_command

ROOT = Path(__file__).resolve().parents[1]


def test_the_embedded_gunicorn_uses_the_production_configuration():
    command = server_command(sys.executable, "127.0.0.1", 8123, gunicorn=True)
    out = subprocess.run(
        [*command[:-1], "--print-config", command[-1]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "WEB_TIMEOUT": "60"},
    )
    assert out.returncode == 0, out.stderr
    printed = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    settings = {k.strip(): v.strip() for k, v in printed.items()}
    assert (settings["worker_class"], settings["timeout"], settings["threads"]) == ("gthread", "60", "4")
    assert settings["bind"] == "['127.0.0.1:8123']"


def test_every_queue_has_its_own_embedded_worker():
    from config.celery import QUEUES, app

    assert sorted(queue for _name, queue, *_ in WORKERS) == sorted(QUEUES)
    routed = {route["queue"] for route in app.conf.task_routes.values()}
    assert routed == set(QUEUES) - {"celery"}
