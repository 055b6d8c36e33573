#!/usr/bin/env python
"""`make run`: the whole product on one machine with no servers to install.

1. applies migrations to the SQLite database under var/ (or DATABASE_URL when set);
2. starts three real Celery worker subprocesses, one per queue (config.celery): sweeps ("celery"),
   batches (at a lower CPU priority, so planning batches never slows the web tier's single
   estimates) and webhook deliveries (threads: a slow receiver holds one thread for at most
   WEBHOOK_DEADLINE_S, never a sweep); without REDIS_URL their broker is kombu's filesystem
   transport under var/broker (same task code as production on Redis);
3. runs Django at http://127.0.0.1:8000 (override with --host/--port); with --gunicorn, gunicorn
   with the production configuration (config/gunicorn.py), only the address from --host/--port;
4. stops the workers when the server exits or on Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCH_NICE = 10  # the batches worker yields the CPU to the web tier (single estimates answer first)
# name, queue, pool, concurrency, nice
WORKERS = (
    ("sweeps", "celery", "solo", 1, 0),
    ("batches", "batches", "solo", 1, BATCH_NICE),
    ("webhooks", "webhooks", "threads", 4, 0),
)


def start_worker(py: str, env: dict, name: str, queue: str, pool: str, concurrency: int, nice: int, log=None):
    command = [py, "-m", "celery", "-A", "config", "worker", "-l", "info", "-Q", queue, "-P", pool]
    command += ["--concurrency", str(concurrency), "--without-gossip", "--without-mingle"]
    command += ["-n", f"embedded-{name}-{os.getpid()}@%h"]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=log,
        start_new_session=True,
        preexec_fn=(lambda: lower_priority(nice)) if nice else None,
    )


def lower_priority(nice: int) -> None:
    """In the new worker process: nice it, and its autogroup too. With Linux's autogroup
    scheduling (kernel.sched_autogroup_enabled) every session is its own scheduling group and a
    process's nice counts only inside it; the worker and the web server each start a session, so
    the group's nice is what gives the web tier the CPU first."""
    os.nice(nice)
    with contextlib.suppress(OSError):  # not Linux, or autogroup scheduling off: nice is enough
        Path("/proc/self/autogroup").write_text(str(nice))


def restart_dead(py: str, env: dict, workers: dict, log=None) -> list[str]:
    """Start again every worker that exited (as compose's restart policy does): a worker can die of
    a lost broker connection (kombu gives up on one while restoring its unacknowledged messages);
    what it held is recovered by the workers' recovery loop (integrations.recovery)."""
    how = {name: rest for name, *rest in WORKERS}
    dead = [name for name, proc in workers.items() if proc.poll() is not None]
    for name in dead:
        workers[name] = start_worker(py, env, name, *how[name], log=log)
    return dead


def server_command(py: str, host: str, port: int, gunicorn: bool) -> list[str]:
    """The web server: runserver, or gunicorn with production's config/gunicorn.py (threaded
    workers, their timeouts and request bounds), only its address taken from --host/--port."""
    if gunicorn:
        return [py, "-m", "gunicorn", "-c", "config/gunicorn.py", "-b", f"{host}:{port}", "config.wsgi"]
    return [py, "manage.py", "runserver", f"{host}:{port}", "--noreload"]


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
    print(f"Starting the Celery workers: sweeps, batches, webhooks ({broker})...", flush=True)
    workers = {name: start_worker(py, env, name, *how) for name, *how in WORKERS}
    if args.gunicorn:
        env.setdefault("WEB_WORKERS", "2")
    server_cmd = server_command(py, args.host, args.port, args.gunicorn)
    print(
        f"ClusterPlan at http://{args.host}:{args.port}/  (Ctrl-C stops the server and the workers)",
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
            for name in restart_dead(py, env, workers):
                print(f"{name} worker exited; started again", file=sys.stderr, flush=True)
            time.sleep(0.5)
    except KeyboardInterrupt:
        code = 0
    finally:
        procs = {"server": server, **{f"{name} worker": w for name, w in workers.items()}}
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # Celery: warm shutdown (finish the current chunk)
        for name, proc in procs.items():
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
