"""Sweep lifecycle -> webhook (sweeps.signals): a new sweep's `callback` is validated and stored
with it; when sweeps.services reports the sweep ended, its callback, if any, fires once."""

from __future__ import annotations

from django.dispatch import receiver

from sweeps.signals import callback_requested, sweep_created, sweep_finished

from . import callbacks, events
from .models import Callback


@receiver(callback_requested, dispatch_uid="integrations.callback_requested")
def validate_sweep_callback(sender, callback, owner, **kwargs) -> str | None:
    return callbacks.parse(callback, owner)


@receiver(sweep_created, dispatch_uid="integrations.sweep_created")
def store_sweep_callback(sender, sweep, owner, callback_url: str | None, base_url: str, **kwargs) -> None:
    callbacks.attach(callback_url, owner, base_url, sweep=sweep)


@receiver(sweep_finished, dispatch_uid="integrations.sweep_finished")
def notify_sweep_finished(sender, sweep_id: int, **kwargs) -> None:
    callback = (
        Callback.objects.filter(sweep_id=sweep_id, status=Callback.Status.WAITING)
        .select_related("sweep")
        .first()
    )
    if callback is None or callback.sweep is None or callback.sweep.is_active:
        return
    sweep = callback.sweep
    callbacks.fire(callback, f"sweep.{sweep.status}", events.sweep_data(sweep, callback.base_url))
