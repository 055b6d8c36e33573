"""Sweep lifecycle -> webhook: when sweeps.services reports a sweep ended (sweeps.signals), its
callback, if any, fires once."""

from __future__ import annotations

from django.dispatch import receiver

from sweeps.signals import sweep_finished

from . import callbacks, events
from .models import Callback


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
