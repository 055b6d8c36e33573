"""Signals of the sweep lifecycle, so that apps built on sweeps (integrations' webhooks) hear of it
without sweeps importing them."""

from django.dispatch import Signal

# Sent with sweep_id=... where a sweep may have ended (done, failed or cancelled), through
# send_robust: a receiver's failure is logged and never fails the sweep. A receiver reads the
# sweep's status; the signal may come more than once for one sweep and must be acted on once.
sweep_finished = Signal()
