"""Shapes of the integrations API for the OpenAPI document, and the batch's JSON."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from rest_framework import serializers

from api.exceptions import ErrorSerializer
from api.schema import CallbackSerializer
from api.timestamps import rfc3339
from estimator import limits
from integrations.batches import MAX_NAME_CHARS, PENDING, counts, items_of
from integrations.models import Batch, BatchItem, Callback
from reports.api.serializers import EstimateSerializer, SharedReportSerializer


class BatchRequestSerializer(serializers.Serializer):
    scenarios = serializers.ListField(
        child=serializers.JSONField(),
        min_length=1,
        max_length=limits.MAX_BATCH_SCENARIOS,
        help_text=f"Up to {limits.MAX_BATCH_SCENARIOS} scenarios (docs/architecture.md#scenario-contract), "
        "each the body of POST /api/v1/estimates.",
    )
    name = serializers.CharField(required=False, allow_blank=True, max_length=MAX_NAME_CHARS)
    callback = CallbackSerializer(required=False)


class BatchItemSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position of the scenario in the request")
    status = serializers.IntegerField(
        help_text="202 waiting to be planned; 201 planned; 400 refused (see error); 500 not planned because "
        "of an internal error (send it again); 404 its estimate was deleted since"
    )
    ok = serializers.BooleanField(
        required=False,
        help_text="Whether the scenario was planned (absent while pending); false: the reason in error, no figures",
    )
    estimate = EstimateSerializer(
        required=False, help_text="When 201: the body POST /api/v1/estimates answers"
    )
    error = ErrorSerializer(
        required=False, help_text="Otherwise: the one error shape, field paths scenarios.<index>.<field>"
    )


class CallbackStateSerializer(serializers.Serializer):
    url = serializers.CharField()
    status = serializers.ChoiceField(choices=Callback.Status.choices)
    deliveries_url = serializers.CharField()


class BatchSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=Batch.Status.choices, help_text="queued, running or done")
    count = serializers.IntegerField()
    planned = serializers.IntegerField()
    failed = serializers.IntegerField()
    pending = serializers.IntegerField(help_text="Items not planned yet")
    url = serializers.CharField()
    compare_url = serializers.CharField()
    xlsx_url = serializers.CharField()


class BatchSerializer(BatchSummarySerializer):
    url = serializers.CharField(help_text="This batch again: GET (yours by id; anonymous ones by token)")
    compare_url = serializers.CharField(
        help_text="Public page with every planned quote side by side (its address is its share link)"
    )
    xlsx_url = serializers.CharField(help_text="The comparison as Excel: one column per planned quote")
    callback = CallbackStateSerializer(allow_null=True)
    results = BatchItemSerializer(many=True)


def _url(request, name: str, *args: Any) -> str:
    with translation.override(settings.LANGUAGE_CODE):  # language-neutral links
        path = reverse(name, args=args)
    return request.build_absolute_uri(path) if request is not None else path


def item_payload(item: BatchItem, request, shared: bool) -> dict[str, Any]:
    if item.status == PENDING:  # not planned (yet): `ok` is false, as the schema says of every item
        return {"index": item.index, "status": PENDING, "ok": False}
    if item.estimate is not None:
        serializer = SharedReportSerializer if shared else EstimateSerializer
        return {
            "index": item.index,
            "status": 201,
            "ok": True,
            "estimate": serializer(item.estimate, context={"request": request}).data,
        }
    if item.status == 201:
        status, errors = (
            404,
            [{"field": f"scenarios.{item.index}", "message": "its estimate was deleted since"}],
        )
    else:
        status, errors = item.status, item.errors
    # not planned (a refused layout among them): the reason, and no figures
    return {"index": item.index, "status": status, "ok": False, "error": {"errors": errors}}


def batch_summary(batch: Batch, request, shared: bool = False) -> dict[str, Any]:
    owned = batch.owner_id is not None and not shared
    return {
        "id": batch.pk,
        "name": batch.name,
        "created_at": rfc3339(batch.created_at),
        "status": batch.status,
        **counts(batch),
        "url": _url(request, "integrations_api:batch", batch.pk)
        if owned
        else _url(request, "integrations_api:batch-shared", batch.share_token),
        "compare_url": _url(request, "integrations_pages:batch", batch.share_token),
        "xlsx_url": _url(request, "integrations_pages:batch-xlsx", batch.share_token),
    }


def batch_payload(batch: Batch, request, shared: bool = False) -> dict[str, Any]:
    """The batch as POST answers it and GET repeats it; `shared`: read through its token (no ids,
    no callback)."""
    owned = batch.owner_id is not None and not shared
    callback = None
    if owned:
        found = Callback.objects.filter(batch=batch).first()
        if found is not None:
            callback = {
                "url": found.url,
                "status": found.status,
                "deliveries_url": _url(request, "integrations_api:deliveries") + f"?batch={batch.pk}",
            }
    return {
        **batch_summary(batch, request, shared),
        "callback": callback,
        "results": [item_payload(item, request, shared) for item in items_of(batch)],
    }


class SigningSecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text='"whsec_" + base64 of 32 random bytes (Standard Webhooks)')
    created_at = serializers.DateTimeField()
    previous_valid_until = serializers.DateTimeField(
        allow_null=True, help_text="After a rotation, the previous secret also signs until then"
    )
    verify = serializers.CharField(help_text="How to verify a notification")


class DeliveryAttemptSerializer(serializers.Serializer):
    attempt = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(
        allow_null=True, help_text="Empty while the attempt runs (or if its worker was lost)"
    )
    duration_ms = serializers.IntegerField(allow_null=True)
    status_code = serializers.IntegerField(allow_null=True)
    error = serializers.CharField()
    response_excerpt = serializers.CharField(help_text="At most 120 printable characters of the answer")


class WebhookSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    status = serializers.ChoiceField(choices=Callback.Status.choices)
    sweep = serializers.IntegerField(allow_null=True)
    batch = serializers.IntegerField(allow_null=True)
    event_id = serializers.CharField(help_text="The webhook-id header; the same on every attempt")
    event_type = serializers.CharField(help_text="sweep.done, sweep.failed, sweep.cancelled or batch.done")
    payload = serializers.JSONField(allow_null=True, help_text="The body sent")
    created_at = serializers.DateTimeField()
    fired_at = serializers.DateTimeField(allow_null=True)
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    attempts = DeliveryAttemptSerializer(many=True)


def webhook_payload(callback: Callback) -> dict[str, Any]:
    return {
        "id": callback.pk,
        "url": callback.url,
        "status": callback.status,
        "sweep": callback.sweep_id,
        "batch": callback.batch_id,
        "event_id": callback.event_id,
        "event_type": callback.event_type,
        "payload": json.loads(callback.payload) if callback.payload else None,
        "created_at": rfc3339(callback.created_at),
        "fired_at": rfc3339(callback.fired_at),
        "next_attempt_at": rfc3339(callback.next_attempt_at),
        "attempts": [
            {
                "attempt": a.attempt,
                "started_at": rfc3339(a.started_at),
                "finished_at": rfc3339(a.finished_at),
                "duration_ms": a.duration_ms,
                "status_code": a.status_code,
                "error": a.error,
                "response_excerpt": a.response_excerpt,
            }
            for a in callback.deliveries.all()
        ],
    }


class SweepEventDataSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField(help_text="done, failed or cancelled")
    error = serializers.CharField(help_text="Why it failed; empty otherwise")
    progress = serializers.DictField(child=serializers.IntegerField(), help_text="done, total")
    finished_at = serializers.DateTimeField(allow_null=True)
    status_url = serializers.CharField()
    results_url = serializers.CharField()
    share_url = serializers.CharField()


class BatchEventDataSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField(help_text="done")
    count = serializers.IntegerField()
    planned = serializers.IntegerField()
    failed = serializers.IntegerField()
    pending = serializers.IntegerField(help_text="0: the batch is done")
    url = serializers.CharField()
    compare_url = serializers.CharField()
    xlsx_url = serializers.CharField()


class SweepEventSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["sweep.done", "sweep.failed", "sweep.cancelled"])
    timestamp = serializers.DateTimeField()
    data = SweepEventDataSerializer()  # type: ignore[assignment]  # the event's field, not Serializer.data


class BatchEventSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["batch.done"])
    timestamp = serializers.DateTimeField()
    data = BatchEventDataSerializer()  # type: ignore[assignment]  # the event's field, not Serializer.data
