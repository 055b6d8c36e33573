"""REST API of sweeps: thin views over sweeps.services and sweeps.selectors. Errors use the API's one shape
{"errors": [{"field", "message"}]} (api.exceptions maps ScenarioError to 400)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.db import transaction
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import renderers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.exceptions import ErrorSerializer
from api.parsers import StrictJSONParser
from api.schema import TEAM_PARAMETER
from api.throttling import AnonRateThrottle, SweepCreateThrottle, UserRateThrottle, client_ip
from reports import money
from reports.cells import neutralize, neutralize_row
from reports.money import SWEEP_AMOUNT_COLUMNS, SWEEP_AMOUNT_KINDS, Kind
from sweeps import selectors, services, signals, watchdog
from sweeps.models import Sweep
from teams.selectors import may_manage

from .serializers import (
    ResultPageSerializer,
    SweepListItemSerializer,
    SweepRequestSerializer,
    SweepStatusSerializer,
)

ERRORS = {
    400: ErrorSerializer,
    401: ErrorSerializer,
    403: ErrorSerializer,
    404: ErrorSerializer,
    429: ErrorSerializer,
}
MAX_PAGE_SIZE = 10_000
DEFAULT_PAGE_SIZE = 1_000


class CSVRenderer(renderers.BaseRenderer):
    """Lets `?format=csv` through DRF's content negotiation; the view streams the CSV itself."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, dict) and "errors" in data:  # an error while asking for CSV
            buf = io.StringIO()
            csv.writer(buf).writerows(neutralize_row([e["field"], e["message"]]) for e in data["errors"])
            return buf.getvalue().encode()
        return data


CALLBACK = "callback"  # the request's webhook (SweepRequestSerializer.callback)


def _without_callback(body: Any) -> tuple[Any, Any]:
    """The request without its `callback`, and the callback (None when absent)."""
    if not isinstance(body, dict) or CALLBACK not in body:
        return body, None
    return {k: v for k, v in body.items() if k != CALLBACK}, body[CALLBACK]


def _requested_callback(callback: Any, owner) -> str | None:
    """The callback's URL as the integrations app validated it (sweeps.signals.callback_requested)."""
    answers = signals.callback_requested.send(Sweep, callback=callback, owner=owner)
    return next((url for _receiver, url in answers if url is not None), None)


class SweepListCreateView(APIView):
    """POST: start a sweep (202). GET: your sweeps, newest first."""

    parser_classes = [StrictJSONParser]
    throttle_classes = [AnonRateThrottle, UserRateThrottle, SweepCreateThrottle]

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "POST" else [IsAuthenticated()]

    @extend_schema(
        operation_id="sweeps_create",
        summary="Start a sweep over the product of axes",
        description="Anonymous sweeps are allowed with a smaller limit and are reachable only through their "
        "share link. Chunks run on Celery workers; poll status_url, or name a `callback` (with a token) to "
        "receive a signed notification when the sweep is done, failed or cancelled.",
        request=SweepRequestSerializer,
        parameters=[TEAM_PARAMETER],
        responses={202: SweepStatusSerializer, **ERRORS},
    )
    def post(self, request):
        owner = request.user if request.user.is_authenticated else None
        data, callback = _without_callback(request.data)
        callback_url = _requested_callback(callback, owner)  # the webhook, validated first
        with transaction.atomic():  # the callback is stored before any chunk is queued
            sweep = services.create_sweep(
                data=data, owner=owner, client_ip=client_ip(request), team=request.query_params.get("team")
            )
            signals.sweep_created.send(
                Sweep,
                sweep=sweep,
                owner=owner,
                callback_url=callback_url,
                base_url=request.build_absolute_uri("/"),
            )
        body = selectors.status_payload(sweep=sweep, request=request)
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["status_url"]})

    @extend_schema(
        operation_id="sweeps_list",
        summary="Your sweeps and your teams', newest first (at most 100; without base and summary)",
        responses={200: SweepListItemSerializer(many=True), 401: ErrorSerializer},
    )
    def get(self, request):
        sweeps = selectors.sweeps_of(user=request.user).select_related("team").defer("summary", "base")[:100]
        rows = []
        for s in sweeps:
            body = selectors.status_payload(sweep=s, request=request)
            body.pop("summary"), body.pop("base")
            rows.append(body)
        return Response(rows)


def _owned(request, pk: int) -> Sweep:
    """A sweep of the user or of the user's teams; anyone else's answers 404, as if it did not exist."""
    try:
        return selectors.visible_sweep(user=request.user, pk=pk)
    except Sweep.DoesNotExist:
        raise Http404 from None


def _managed(request, pk: int) -> Sweep:
    """Cancel and delete: the owner or an admin of the sweep's team (another member: 403)."""
    sweep = _owned(request, pk)
    if not may_manage(user=request.user, obj=sweep):
        raise PermissionDenied("only the sweep's owner or an admin of its team may do this")
    return sweep


def _shared(token: str) -> Sweep:
    return get_object_or_404(Sweep, share_token=token)


class SweepDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="sweeps_retrieve", responses={200: SweepStatusSerializer, **ERRORS})
    def get(self, request, pk: int):
        sweep = _owned(request, pk)
        watchdog.watchdog(sweep=sweep)
        return Response(selectors.status_payload(sweep=sweep, request=request))

    @extend_schema(operation_id="sweeps_destroy", responses={204: None, **ERRORS})
    def delete(self, request, pk: int):
        sweep = _managed(request, pk)
        services.cancel(sweep=sweep)
        sweep.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class SweepCancelView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="sweeps_cancel", request=None, responses={200: SweepStatusSerializer, **ERRORS}
    )
    def post(self, request, pk: int):
        sweep = _managed(request, pk)
        services.cancel(sweep=sweep)
        return Response(selectors.status_payload(sweep=sweep, request=request))


class SharedSweepView(APIView):
    """A shared sweep: public and read-only."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="sweeps_shared_retrieve", responses={200: SweepStatusSerializer, **ERRORS})
    def get(self, request, token: str):
        sweep = _shared(token)
        watchdog.watchdog(sweep=sweep)
        return Response(selectors.status_payload(sweep=sweep, request=request))


RESULT_PARAMS = [
    OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], description="json (default) or csv"),
    OpenApiParameter("page", OpenApiTypes.INT, description="1-based; CSV without page streams every row"),
    OpenApiParameter("page_size", OpenApiTypes.INT, description=f"rows per page, at most {MAX_PAGE_SIZE:,}"),
]


CSV_TEXT = OpenApiResponse(
    OpenApiTypes.STR, description="With ?format=csv: the rows as CSV (errors: field,message rows)"
)
RESULT_RESPONSES = {
    (200, "application/json"): ResultPageSerializer,
    (200, "text/csv"): CSV_TEXT,
    **{(code, "application/json"): serializer for code, serializer in ERRORS.items()},
    **{(code, "text/csv"): CSV_TEXT for code in ERRORS},  # an error asked for as CSV is CSV
}


class _ResultsMixin:
    renderer_classes: Sequence[type[BaseRenderer]] = [
        renderers.JSONRenderer,
        renderers.BrowsableAPIRenderer,
        CSVRenderer,
    ]

    def results(self, request, sweep: Sweep):
        page_raw = request.query_params.get("page")
        size_raw = request.query_params.get("page_size", str(DEFAULT_PAGE_SIZE))
        try:
            page = int(page_raw) if page_raw is not None else None
            page_size = int(size_raw)
        except ValueError:
            raise ValidationError({"page": "page and page_size must be whole numbers"}) from None
        if page is not None and page < 1:
            raise ValidationError({"page": "must be 1 or more"})
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ValidationError({"page_size": f"must be between 1 and {MAX_PAGE_SIZE:,}"})
        as_csv = getattr(request.accepted_renderer, "format", "") == "csv"
        if as_csv:
            start, stop = (0, sweep.total) if page is None else ((page - 1) * page_size, page * page_size)
            response = StreamingHttpResponse(
                _csv_stream(sweep, start, stop), content_type="text/csv; charset=utf-8"
            )
            suffix = "" if page is None else f"-page{page}"
            response["Content-Disposition"] = f'attachment; filename="sweep-{sweep.pk}{suffix}.csv"'
            return response
        body = selectors.result_page(sweep=sweep, page=page or 1, page_size=page_size)
        amounts = [c for c in body["columns"] if c in SWEEP_AMOUNT_COLUMNS]
        return Response(
            {**body, "currency": selectors.sweep_currency(sweep=sweep), "amount_columns": amounts}
        )


CSV_BLOCK_ROWS = 5_000  # rows per streamed piece: memory stays bounded and bytes flow steadily


def _csv_header(columns: list[str], amounts: list[int], currency: str | None) -> list[str]:
    """An amount's column names its currency: "cost.run.owned (USD)"; with the currency swept,
    "(cost.currency)": each row's is in that column."""
    unit = currency or selectors.CURRENCY_FIELD
    return [money.header(c, unit) if i in amounts else c for i, c in enumerate(columns)]


def _csv_stream(sweep: Sweep, start: int, stop: int):
    """The rows as CSV, streamed block by block (CSV_BLOCK_ROWS rows: memory bounded by a block);
    every cell through reports.cells.neutralize (a string axis value such as "=HYPERLINK(...)"
    must not run as a formula), amounts as decimal strings (reports.money) in the sweep's currency
    or the row's. Built column by column: a cell of a number column passes neutralize unchanged,
    so only text and amount columns are visited, each distinct value converted once."""
    header_done = False
    currency = selectors.sweep_currency(sweep=sweep)
    for names, cols in selectors.iter_result_columns(
        sweep=sweep, start=start, stop=stop, block_rows=CSV_BLOCK_ROWS
    ):
        amounts = [i for i, c in enumerate(names) if c in SWEEP_AMOUNT_COLUMNS]
        where = names.index(selectors.CURRENCY_FIELD) if selectors.CURRENCY_FIELD in names else None
        row_currency = None
        if currency is None:
            row_currency = (
                [str(c) for c in cols[where].tolist()] if where is not None else ["USD"] * len(cols[0])
            )
        buf = io.StringIO()
        writer = csv.writer(buf)
        if not header_done:
            writer.writerow(neutralize_row(_csv_header(names, amounts, currency)))
            header_done = True
        cells = [
            _amount_cells(col, currency, row_currency, SWEEP_AMOUNT_KINDS[names[i]])
            if i in amounts
            else _csv_cells(col)
            for i, col in enumerate(cols)
        ]
        writer.writerows(zip(*cells, strict=True))
        yield buf.getvalue()
    if not header_done:
        buf = io.StringIO()
        csv.writer(buf).writerow(neutralize_row(["index"] + [a["field"] for a in sweep.axes]))
        yield buf.getvalue()


def _csv_cells(values) -> list:
    """A column's cells as the csv module writes them. Floats: repr (what csv.writer writes for a
    float), once per distinct bit pattern (0.0 and -0.0 apart); text through neutralize once per
    distinct value; ints and booleans as they are (neutralize leaves numbers unchanged)."""
    if values.dtype.kind == "f":
        distinct, where = np.unique(values.view(f"u{values.dtype.itemsize}"), return_inverse=True)
        reprs = np.array([repr(v) for v in distinct.view(values.dtype).tolist()], dtype=object)
        return reprs[where.reshape(-1)].tolist()
    cells = values.tolist()
    if values.dtype.kind not in "OUS":
        return cells
    seen: dict = {}
    return [seen[v] if v in seen else seen.setdefault(v, neutralize(v)) for v in cells]


def _amount_cells(
    values, currency: str | None, row_currency: list[str] | None, kind: Kind = "total"
) -> list[str]:
    """An amount column's cells: decimal strings (empty without an amount) in `currency`, once per
    distinct bit pattern; or in each row's currency when the currency is swept, once per distinct
    (amount, currency). A rate (`kind`, reports.money) keeps its two more places."""
    if currency is not None and values.dtype.kind == "f":
        distinct, where = np.unique(values.view(f"u{values.dtype.itemsize}"), return_inverse=True)
        amounts = distinct.view(values.dtype).tolist()
        cells = np.array(
            [neutralize(money.decimal_amount(v, currency, kind) or "") for v in amounts], dtype=object
        )
        return cells[where.reshape(-1)].tolist()
    seen: dict = {}
    out = []
    plain = values.tolist()
    currencies = [currency] * len(plain) if currency is not None else row_currency or []
    for v, cur in zip(plain, currencies, strict=True):
        key = (v, cur)
        cell = seen.get(key)
        if cell is None:
            cell = seen[key] = neutralize(money.decimal_amount(v, cur, kind) or "")
        out.append(cell)
    return out


class SweepResultsView(_ResultsMixin, APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="sweeps_results",
        parameters=RESULT_PARAMS,
        responses=RESULT_RESPONSES,
    )
    def get(self, request, pk: int):
        return self.results(request, _owned(request, pk))


class SharedSweepResultsView(_ResultsMixin, APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="sweeps_shared_results",
        parameters=RESULT_PARAMS,
        responses=RESULT_RESPONSES,
    )
    def get(self, request, token: str):
        return self.results(request, _shared(token))
