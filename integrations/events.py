"""The `data` of each notification: what ended, how, and links back (absolute, on the address the
callback was given through; language-neutral like every API link)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import translation

from api.timestamps import rfc3339
from sweeps.models import Sweep

from .models import Batch


def absolute(base_url: str, name: str, *args: Any) -> str:
    with translation.override(settings.LANGUAGE_CODE):
        path = reverse(name, args=args)
    return base_url.rstrip("/") + path


def sweep_data(sweep: Sweep, base_url: str) -> dict[str, Any]:
    return {
        "id": sweep.pk,
        "name": sweep.name,
        "status": sweep.status,
        "error": sweep.error,
        "progress": {"done": sweep.done, "total": sweep.total},
        "finished_at": rfc3339(sweep.finished_at),
        "status_url": absolute(base_url, "sweeps_api:detail", sweep.pk),
        "results_url": absolute(base_url, "sweeps_api:results", sweep.pk),
        "share_url": absolute(base_url, "sweeps_pages:report", sweep.share_token),
    }


def batch_data(batch: Batch, base_url: str, counts: dict[str, int]) -> dict[str, Any]:
    return {
        "id": batch.pk,
        "name": batch.name,
        "status": "done",
        **counts,
        "url": absolute(base_url, "integrations_api:batch", batch.pk),
        "compare_url": absolute(base_url, "integrations_pages:batch", batch.share_token),
        "xlsx_url": absolute(base_url, "integrations_pages:batch-xlsx", batch.share_token),
    }
