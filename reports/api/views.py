"""REST API v1: thin views over reports.services/selectors and the core's catalog."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from api.conditional import immutable
from api.exceptions import ErrorItemSerializer, ErrorSerializer
from api.pagination import Pagination
from api.parsers import StrictJSONParser
from api.schema import IF_NONE_MATCH, PAGE_PARAMETERS, TEAM_PARAMETER, inline_refs, paginated
from estimator import catalog
from estimator.contract.scenario import scenario_json_schema
from reports import selectors, services
from reports.models import Estimate
from reports.money import money, result_currency
from reports.pages import report_counts
from teams.selectors import may_manage

from .serializers import (
    BookSummarySerializer,
    DiffRowSerializer,
    EstimateListItemSerializer,
    EstimateSerializer,
    MoneySerializer,
    RecomputedResultField,
    SharedReportSerializer,
    book_summary,
)

ERRORS = {400: ErrorSerializer, 401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer}
FORBIDDEN = {403: ErrorSerializer}


def _scenario_request() -> dict:
    return {"application/json": inline_refs(scenario_json_schema())}


def _location(request, estimate: Estimate) -> str:
    """Where the new estimate is: its API resource for its owner; the shared report (JSON) when
    anonymous, since only the share link reaches it."""
    if estimate.owner_id is None:
        path = reverse("api:report", args=[estimate.share_token])
    else:
        path = reverse("api:estimate", args=[estimate.pk])
    return request.build_absolute_uri(path)


class EstimateListCreateView(APIView):
    """POST: plan a scenario (anonymous allowed, throttled). GET: your own estimates."""

    parser_classes = [StrictJSONParser]

    def get_permissions(self):
        return [AllowAny()] if self.request.method == "POST" else [IsAuthenticated()]

    @extend_schema(
        operation_id="estimates_create",
        summary="Plan a training cluster",
        description="The body is a scenario (docs/architecture.md#scenario-contract). With a token the estimate belongs to you "
        "and goes to a team (`team`), whose members see it too; anonymous estimates are reachable only through "
        "their share link. `cost.price_book` names a price book of one of your teams (`<team>/<book>` for its "
        "latest version, `@<version>` to pin one): its prices replace the catalog's, the version is stored with "
        "the estimate (`price_book`) and listed in the result's assumptions; a book you cannot use is a 400 on "
        "`cost.price_book`.",
        parameters=[TEAM_PARAMETER],
        request=_scenario_request(),
        responses={201: EstimateSerializer, **ERRORS},
    )
    def post(self, request):
        estimate = services.create_estimate(
            data=request.data, owner=request.user, team=request.query_params.get("team")
        )
        body = EstimateSerializer(estimate, context={"request": request}).data
        return Response(
            body, status=status.HTTP_201_CREATED, headers={"Location": _location(request, estimate)}
        )

    @extend_schema(
        operation_id="estimates_list",
        summary="Your estimates and your teams', newest first",
        parameters=PAGE_PARAMETERS,
        responses={
            200: paginated("PaginatedEstimateList", EstimateListItemSerializer),
            401: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def get(self, request):
        paginator = Pagination()
        page = paginator.paginate_queryset(selectors.estimates_of(user=request.user), request, view=self)
        return paginator.get_paginated_response(
            EstimateListItemSerializer(page, many=True, context={"request": request}).data
        )


class EstimateDetailView(APIView):
    """One of your estimates or of your teams'. Anyone else's answers 404, as if it did not exist;
    deleting is for the owner and the team's admins (another member: 403)."""

    permission_classes = [IsAuthenticated]

    def _get(self, request, pk: int) -> Estimate:
        try:
            return selectors.owned_estimate(user=request.user, pk=pk)
        except Estimate.DoesNotExist:
            raise Http404 from None

    @extend_schema(
        operation_id="estimates_retrieve",
        responses={200: EstimateSerializer, 401: ErrorSerializer, 404: ErrorSerializer},
    )
    def get(self, request, pk: int):
        return Response(EstimateSerializer(self._get(request, pk), context={"request": request}).data)

    @extend_schema(
        operation_id="estimates_destroy",
        responses={204: None, 401: ErrorSerializer, 404: ErrorSerializer, **FORBIDDEN},
    )
    def delete(self, request, pk: int):
        estimate = self._get(request, pk)
        if not may_manage(user=request.user, obj=estimate):
            raise PermissionDenied("only the estimate's owner or an admin of its team may delete it")
        services.delete_estimate(estimate=estimate)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _shared(token: str) -> Estimate:
    try:
        return selectors.shared_estimate(token=token)
    except Estimate.DoesNotExist:
        raise Http404 from None


def _report_identity(_request, token: str) -> tuple | None:  # public through its token
    found = Estimate.objects.filter(share_token=token).values_list("pk", "created_at").first()
    return None if found is None else ("report", *found)


class SharedReportView(APIView):
    """A shared report: public and read-only (anything but GET answers 405). It never changes, so
    it has an ETag and answers If-None-Match with 304."""

    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="reports_retrieve",
        parameters=[IF_NONE_MATCH],
        responses={200: SharedReportSerializer, 304: None, 404: ErrorSerializer},
    )
    @immutable(_report_identity)
    def get(self, request, token: str):
        return Response(SharedReportSerializer(_shared(token), context={"request": request}).data)


class RecomputeView(APIView):
    """The shared report planned again with today's engine and catalog; nothing is stored."""

    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="reports_recompute",
        responses={
            200: inline_serializer(
                "Recompute",
                {
                    "stored": inline_serializer(
                        "Versions",
                        {
                            "engine_version": serializers.CharField(),
                            "catalog_version": serializers.CharField(),
                        },
                    ),
                    "today": inline_serializer(
                        "TodayVersions",
                        {
                            "engine_version": serializers.CharField(),
                            "catalog_version": serializers.CharField(),
                        },
                    ),
                    "changes": DiffRowSerializer(many=True),
                    "price_book": BookSummarySerializer(
                        allow_null=True,
                        help_text="The price book the stored report used (recompute uses it too).",
                    ),
                    "newer_price_book": BookSummarySerializer(
                        allow_null=True, help_text="The book's latest version when newer than the one used."
                    ),
                    "result": RecomputedResultField(
                        allow_null=True, help_text="The plan with today's engine and catalog; null if refused"
                    ),
                    "errors": ErrorItemSerializer(
                        many=True,
                        allow_null=True,
                        help_text="Why today's engine refuses the stored input (null when it plans it)",
                    ),
                },
            ),
            404: ErrorSerializer,
        },
    )
    def get(self, request, token: str):
        estimate = _shared(token)
        out = services.recompute(estimate=estimate)
        return Response(
            {
                "stored": {
                    "engine_version": estimate.engine_version,
                    "catalog_version": estimate.catalog_version,
                },
                "today": {
                    "engine_version": out.get("engine_version"),
                    "catalog_version": out.get("catalog_version"),
                },
                "changes": [
                    {k: r[k] for k in ("key", "label", "before", "after", "change")} for r in out["rows"]
                ],
                "result": out.get("result"),
                "errors": out["error"],
                "price_book": book_summary(estimate.price_book),
                "newer_price_book": out["newer_book"],
            }
        )


_COUNT_POINTS = inline_serializer(
    "CountPoint",
    {
        "cards": serializers.IntegerField(),
        "planned": serializers.BooleanField(help_text="False: the engine cannot plan this count (refusal)."),
        "wall_clock_days": serializers.FloatField(
            allow_null=True, help_text="The headline's days: with failures where counted (the median)."
        ),
        "compute_days": serializers.FloatField(allow_null=True, help_text="Days of computing alone."),
        "mfu": serializers.FloatField(allow_null=True, help_text="The MFU of this count's own best layout."),
        "capex": MoneySerializer(allow_null=True, help_text="The cluster's capex at this count."),
        "refusal": inline_serializer(
            "CountRefusal",
            {
                "code": serializers.CharField(
                    help_text="count-no-layout, count-no-fabric, count-never-finishes, ..."
                ),
                "message": serializers.CharField(help_text="The core's English sentence."),
                "params": serializers.DictField(help_text="What the code's sentence is worded with (cards)."),
            },
            allow_null=True,
        ),
    },
    many=True,
)


class CardsCurveView(APIView):
    """The shared report's "cards against days and cost" chart as data: the stored input planned
    at round sizes around its cards (reports.count_points, the same points the report draws, from
    the same cache). A refused count has its code, params and the core's English sentence (the
    report words it in the reader's language)."""

    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="reports_cards",
        responses={
            200: inline_serializer(
                "CardsCurve",
                {
                    "cards": serializers.IntegerField(help_text="The plan's own card count."),
                    "reproduced": serializers.BooleanField(
                        help_text="False: today's engine or catalog does not plan the stored count as "
                        "stored (see recompute), so there are no points."
                    ),
                    "points": _COUNT_POINTS,
                },
            ),
            404: ErrorSerializer,
        },
    )
    def get(self, request, token: str):
        estimate = _shared(token)
        cur = result_currency(estimate.result)
        counts = report_counts(estimate)
        return Response(
            {
                "cards": estimate.result.get("compute", {}).get("cards"),
                "reproduced": bool(counts),
                "points": [_count_point(p, cur) for p in counts],
            }
        )


def _count_point(point: dict, currency: str) -> dict:
    code = point.get("refusal_code") or ""
    refusal = {
        "code": code,
        "message": point.get("refusal_message", ""),
        "params": point.get("refusal_params"),
    }
    return {
        "cards": point["cards"],
        "planned": not code,
        "wall_clock_days": point.get("wall_clock_days"),
        "compute_days": point.get("compute_days"),
        "mfu": point.get("mfu"),
        "capex": money(point.get("capex_in_currency"), currency),
        "refusal": refusal if code else None,
    }


class ScenarioSchemaView(APIView):
    """JSON Schema (2020-12) of the scenario body."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="scenario_schema", responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response(scenario_json_schema())


# ---- catalog ---------------------------------------------------------------------------------


def _jsonable(entry: Any) -> Any:
    if dataclasses.is_dataclass(entry) and not isinstance(entry, type):
        return dataclasses.asdict(entry)
    return entry


def _entries(kind: str) -> list[dict]:
    items = getattr(catalog, kind)()
    values = items.values() if isinstance(items, dict) else items
    return [_jsonable(v) for v in values]


CATALOG_KINDS = {
    "accelerators": "accelerators",
    "servers": "servers",
    "switches": "switches",
    "models": "presets",
}


class CatalogIndexView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(operation_id="catalog_index", responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response(
            {
                "catalog_version": catalog.CATALOG_VERSION,
                "kinds": {
                    kind: request.build_absolute_uri(f"{request.path.rstrip('/')}/{kind}")
                    for kind in CATALOG_KINDS
                },
            }
        )


class CatalogListView(APIView):
    """Catalog entries of one kind: accelerators, servers, switches or models (presets). Every
    figure carries its source and date."""

    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="catalog_list",
        parameters=[OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=list(CATALOG_KINDS))],
        responses={200: OpenApiTypes.OBJECT, 404: ErrorSerializer},
    )
    def get(self, request, kind: str):
        if kind not in CATALOG_KINDS:
            raise Http404
        return Response(
            {"catalog_version": catalog.CATALOG_VERSION, "results": _entries(CATALOG_KINDS[kind])}
        )


class CatalogDetailView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="catalog_retrieve",
        parameters=[OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=list(CATALOG_KINDS))],
        responses={200: OpenApiTypes.OBJECT, 404: ErrorSerializer},
    )
    def get(self, request, kind: str, entry_id: str):
        if kind not in CATALOG_KINDS:
            raise Http404
        for entry in _entries(CATALOG_KINDS[kind]):
            if isinstance(entry, dict) and entry.get("id") == entry_id:
                return Response(entry)
        raise Http404
