"""REST API of the integrations app: batches of quotes, the webhook signing secret, and webhook
deliveries. Thin views over integrations.batches / signing; errors in the API's one shape."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Prefetch
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from api.exceptions import ErrorSerializer, error_response
from api.pagination import Pagination
from api.parsers import StrictJSONParser
from api.schema import PAGE_PARAMETERS, TEAM_PARAMETER, paginated
from api.throttling import client_ip
from api.timestamps import rfc3339
from integrations import batches, signing
from integrations.models import Batch, Callback, DeliveryAttempt

from .serializers import (
    BatchRequestSerializer,
    BatchSerializer,
    BatchSummarySerializer,
    SigningSecretSerializer,
    WebhookSerializer,
    batch_payload,
    batch_summary,
    webhook_payload,
)
from .throttling import BatchAnonRateThrottle, BatchUserRateThrottle

ERRORS = {400: ErrorSerializer, 401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer}
VERIFY = (
    "Standard Webhooks (https://www.standardwebhooks.com): HMAC-SHA256 with the base64-decoded part of "
    'the secret after "whsec_", over "<webhook-id>.<webhook-timestamp>.<raw body>", base64-encoded, '
    'compared with each "v1,<signature>" of the webhook-signature header; refuse a timestamp more than '
    "5 minutes away. Python: standardwebhooks.Webhook(secret).verify(body, headers). See docs/procurement.md."
)


POLL_AFTER_S = "5"  # while a batch is planned: when to read it again (Retry-After, RFC 9110)


def polled(response: Response, batch: Batch) -> Response:
    """A batch still being planned says when to look again."""
    if batch.status in Batch.ACTIVE:
        response["Retry-After"] = POLL_AFTER_S
    return response


def site_url(request) -> str:
    """Where the links of a notification point: the address the request came through."""
    return request.build_absolute_uri("/")


class BatchListCreateView(APIView):
    """POST: plan a batch of scenarios (quotes) in one request. GET: your batches."""

    parser_classes = [StrictJSONParser]
    throttle_classes = [BatchAnonRateThrottle, BatchUserRateThrottle]

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "POST" else [IsAuthenticated()]

    @extend_schema(
        operation_id="estimates_batch_list",
        summary="Your batches, newest first (without their results)",
        parameters=PAGE_PARAMETERS,
        responses={
            200: paginated("PaginatedBatchSummaryList", BatchSummarySerializer),
            401: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def get(self, request):
        paginator = Pagination()
        page = paginator.paginate_queryset(Batch.objects.filter(owner=request.user), request, view=self)
        return paginator.get_paginated_response([batch_summary(b, request) for b in page or []])

    @extend_schema(
        operation_id="estimates_batch_create",
        summary="Plan a batch of scenarios (quotes)",
        description="Answered at once (202) with the batch's `url` (Location): GET it until `status` is "
        "`done`; the items are filled as they are planned (202 while waiting). Each scenario is planned as "
        "POST /api/v1/estimates would (and counts as one request against your rate limit); the results come "
        "in the order of the scenarios, each its own estimate or its own error. The response links a "
        "comparison page of every planned quote and its Excel file. With `callback` (needs a token), a "
        "signed notification is POSTed there once every item is planned. At most "
        "BATCH_MAX_ACTIVE_PER_USER batches per caller are queued or running at once (then 429).",
        request=BatchRequestSerializer,
        parameters=[TEAM_PARAMETER],
        responses={202: BatchSerializer, **ERRORS},
    )
    def post(self, request):
        try:
            batch = batches.create_batch(
                data=request.data,
                owner=request.user,
                base_url=site_url(request),
                team=request.query_params.get("team"),
                client_ip=client_ip(request),
            )
        except batches.BatchesBusyError as exc:  # 429 with its own reason, not the rate limit's
            wait = str(max(1, int(settings.BATCH_STALL_S)))
            return error_response([{"field": "", "message": str(exc)}], 429, headers={"Retry-After": wait})
        body = batch_payload(batch, request)
        headers = {"Location": body["url"], "Retry-After": POLL_AFTER_S}
        return Response(body, status=status.HTTP_202_ACCEPTED, headers=headers)


class BatchDetailView(APIView):
    """One of your batches; someone else's answers 404."""

    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="estimates_batch_retrieve", responses={200: BatchSerializer, **ERRORS})
    def get(self, request, pk: int):
        try:
            batch = batches.owned_batch(request.user, pk)
        except Batch.DoesNotExist:
            raise Http404 from None
        return polled(Response(batch_payload(batch, request)), batch)


class SharedBatchView(APIView):
    """A batch through its unguessable token: public and read-only."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="estimates_batch_shared", responses={200: BatchSerializer, **ERRORS})
    def get(self, request, token: str):
        try:
            batch = batches.shared_batch(token)
        except Batch.DoesNotExist:
            raise Http404 from None
        return polled(Response(batch_payload(batch, request, shared=True)), batch)


def _secret_body(user) -> dict:
    record = signing.secret_of(user)
    return {
        "secret": record.secret,
        "created_at": rfc3339(record.created_at),
        "previous_valid_until": rfc3339(signing.previous_valid_until(record)),
        "verify": VERIFY,
    }


class SigningSecretView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="webhooks_secret",
        summary="Your webhook signing secret",
        description="Every notification to your callbacks is signed with it (Standard Webhooks). " + VERIFY,
        responses={200: SigningSecretSerializer, 401: ErrorSerializer},
    )
    def get(self, request):
        return Response(_secret_body(request.user))


class SigningSecretRotateView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="webhooks_secret_rotate",
        summary="Replace your webhook signing secret",
        description="Notifications are signed with the new secret and, for 24 hours, also with the previous "
        "one (two signatures in webhook-signature), so your receiver can switch without missing one.",
        request=None,
        responses={200: SigningSecretSerializer, 401: ErrorSerializer, 429: ErrorSerializer},
    )
    def post(self, request):
        signing.rotate(request.user)
        return Response(_secret_body(request.user))


def _id_param(request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not raw.isdigit() or not 0 < int(raw) < 2**63:
        raise ValidationError({name: "must be a positive whole number"})
    return int(raw)


class DeliveriesView(APIView):
    """Your webhooks, newest first, each with its event and every delivery attempt."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="webhooks_deliveries",
        summary="Your webhook notifications and their delivery attempts",
        parameters=[
            OpenApiParameter("sweep", OpenApiTypes.INT, description="only the callback of this sweep"),
            OpenApiParameter("batch", OpenApiTypes.INT, description="only the callback of this batch"),
            *PAGE_PARAMETERS,
        ],
        responses={
            200: paginated("PaginatedWebhookList", WebhookSerializer),
            400: ErrorSerializer,
            401: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def get(self, request):
        rows = Callback.objects.filter(owner=request.user).prefetch_related(
            Prefetch("deliveries", queryset=DeliveryAttempt.objects.order_by("attempt"))
        )
        if (sweep := _id_param(request, "sweep")) is not None:
            rows = rows.filter(sweep_id=sweep)
        if (batch := _id_param(request, "batch")) is not None:
            rows = rows.filter(batch_id=batch)
        paginator = Pagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response([webhook_payload(c) for c in page or []])
