"""Signals of the sweep lifecycle, so that apps built on sweeps (integrations' webhooks) hear of it
without sweeps importing them.

A request's `callback` (the webhook when the sweep ends) goes through two of them: validated by
`callback_requested` before anything is stored, then stored by `sweep_created` with the sweep."""

from django.dispatch import Signal

# Sent with sweep_id=... where a sweep may have ended (done, failed or cancelled), through
# send_robust: a receiver's failure is logged and never fails the sweep. A receiver reads the
# sweep's status; the signal may come more than once for one sweep and must be acted on once.
sweep_finished = Signal()

# Sent with callback=<the request's `callback` value, None when absent> and owner=<user or None>
# before a sweep is created, through send: a receiver's ScenarioError is the request's 400 (with
# its field path). A receiver returns the URL to notify, or None.
callback_requested = Signal()

# Sent with sweep=..., owner=..., callback_url=<what callback_requested answered, or None> and
# base_url=<the site's absolute root> inside the transaction that stores a new sweep, before any
# of its chunks is queued.
sweep_created = Signal()
