#!/usr/bin/env python
"""`make run`: the whole product on one machine with no servers to install.

1. applies migrations to the SQLite database under var/ (or DATABASE_URL when set);
2. starts ONE real Celery worker subprocess; without REDIS_URL its broker is kombu's filesystem
   transport under var/broker (same task code as production on Redis);
3. runs Django at http://127.0.0.1:8000 (override with --host/--port);
4. stops the worker when the server exits or on Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--gunicorn", action="store_true", help="serve with gunicorn instead of runserver")
    args = parser.parse_args()

    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    env.setdefault("SECURE_HTTPS", "0")  # plain http on localhost: no HTTPS redirect, no secure-only cookies
    env.setdefault("PYTHONUNBUFFERED", "1")
    py = sys.executable

    subprocess.run([py, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True)
    broker = "Redis" if env.get("REDIS_URL") else "filesystem broker under var/broker"
    print(f"Starting one Celery worker ({broker})...", flush=True)
    worker = subprocess.Popen(
        [
            py,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-l",
            "info",
            "--concurrency",
            "1",
            "-P",
            "solo",
            "--without-gossip",
            "--without-mingle",
            "-n",
            f"embedded-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    if args.gunicorn:
        server_cmd = [py, "-m", "gunicorn", "config.wsgi", "-b", f"{args.host}:{args.port}", "-w", "2"]
    else:
        server_cmd = [py, "manage.py", "runserver", f"{args.host}:{args.port}", "--noreload"]
    print(
        f"ClusterPlan at http://{args.host}:{args.port}/  (Ctrl-C stops the server and the worker)",
        flush=True,
    )
    server = subprocess.Popen(server_cmd, cwd=ROOT, env=env, start_new_session=True)

    def stop(_signum=None, _frame=None):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    code = 0
    try:
        while True:
            if server.poll() is not None:
                code = server.returncode
                print(f"server exited ({code})", file=sys.stderr)
                break
            if worker.poll() is not None:
                code = worker.returncode or 1
                print(f"worker exited ({worker.returncode}); stopping", file=sys.stderr)
                break
            time.sleep(0.5)
    except KeyboardInterrupt:
        code = 0
    finally:
        for proc in (server, worker):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # Celery: warm shutdown (finish the current chunk)
        for proc, name in ((server, "server"), (worker, "worker")):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                print(f"{name} did not stop in 15 s; killing it", file=sys.stderr)
                proc.kill()
                proc.wait()
            print(f"{name} stopped", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
