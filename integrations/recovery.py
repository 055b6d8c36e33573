"""The workers' recovery loop: work survives the broker without beat and without anyone reading a
status. Every Celery worker starts it when it is ready (config.celery, worker_ready) as a daemon
thread that, at once and then every RECOVERY_INTERVAL_S:

- runs the sweep watchdog (sweeps.watchdog.watchdog_all): chunks of a sweep with no progress for
  SWEEP_STALL_S whose lease expired are queued again (a Redis restart lost their messages);
- queues again batches with no progress and no live lease (integrations.batch_work.resume_stalled);
- sends again webhook attempts overdue (integrations.delivery.overdue: a lost message, or an
  attempt whose worker died, which is then closed as lost).

Every step is idempotent and claims what it re-queues with a conditional update, so the loops of
several workers never re-queue one thing twice per period; and what a re-queued message does is
itself idempotent (chunk leases and unique chunk rows, batch leases and conditional item updates,
claimed delivery attempts), so no chunk, item or delivery is done twice."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connections

from sweeps import watchdog as sweep_watchdog

from . import batch_work, callbacks, delivery

log = logging.getLogger(__name__)

_stop = threading.Event()
_thread: threading.Thread | None = None


def run_once() -> dict[str, int]:
    """One pass; returns what it did (for the logs and the tests)."""
    outcome: dict[str, int] = dict(sweep_watchdog.watchdog_all())
    outcome["batches_requeued"] = batch_work.resume_stalled()
    resent = delivery.overdue()
    for callback_id, number in resent:
        callbacks.queue_attempt(callback_id, number)
    outcome["deliveries_resent"] = len(resent)
    return outcome


def _loop(interval: float) -> None:
    while not _stop.is_set():
        close_old_connections()
        try:
            outcome = run_once()
            if any(v for k, v in outcome.items() if k != "ok"):
                log.warning("recovery: %s", outcome)
        except Exception:  # a database or broker hiccup: the next pass tries again
            log.exception("recovery pass failed")
        finally:
            connections.close_all()  # this thread's connections only
        _stop.wait(interval)


def start() -> bool:
    """Start the loop once per process (RECOVERY_INTERVAL_S = 0, possible in tests, turns it off)."""
    global _thread
    interval = float(settings.RECOVERY_INTERVAL_S)
    if interval <= 0 or (_thread is not None and _thread.is_alive()):
        return False
    _stop.clear()
    _thread = threading.Thread(target=_loop, args=(interval,), name="clusterplan-recovery", daemon=True)
    _thread.start()
    return True


def stop() -> None:
    _stop.set()
