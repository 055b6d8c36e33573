"""One error shape for every API failure: {"errors": [{"field": "training.tokens", "message": "..."}]}.

`field` is the dotted path into the request body, or "" when the error is about the request as a
whole (authentication, permission, not found, throttling, malformed JSON)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from estimator.errors import ScenarioError


class ErrorItemSerializer(serializers.Serializer):
    field = serializers.CharField(
        help_text='Dotted path into the body, e.g. "training.tokens"; "" for the request as a whole.'
    )
    message = serializers.CharField()
    code = serializers.CharField(
        required=False,
        help_text="For a refused plan (estimator.plan.refusal): no-possible-layout, fixed-layout-does-not-fit, "
        "cards-split-into-no-layout, no-feasible-layout or budget-cards-hold-no-layout",
    )
    params = serializers.DictField(
        required=False,
        help_text="For a refused plan: cards, fixed, reasons (rule codes), rules (in words), suggestions "
        "(the nearest accepted layouts, each as parallelism fields with its predicted_mfu); for "
        "cards-split-into-no-layout, below and above: the nearest round cluster sizes that hold a layout "
        "(null where none)",
    )


class ErrorSerializer(serializers.Serializer):
    errors = ErrorItemSerializer(many=True)  # type: ignore[assignment]  # the API's field, not Serializer.errors


def _flatten(detail, field: str = "") -> list[dict[str, str]]:
    if isinstance(detail, dict):
        out: list[dict[str, str]] = []
        for key, value in detail.items():
            if key in ("detail", "non_field_errors"):
                out += _flatten(value, field)
            else:
                out += _flatten(value, f"{field}.{key}" if field else str(key))
        return out
    if isinstance(detail, list):
        out = []
        for item in detail:
            out += _flatten(item, field)
        return out
    return [{"field": field, "message": str(detail)}]


def error_response(errors: list[dict[str, str]], status_code: int, headers: dict | None = None) -> Response:
    return Response({"errors": errors}, status=status_code, headers=headers)


def exception_handler(exc, context):
    if isinstance(exc, ScenarioError):
        return error_response(exc.to_dict()["errors"], status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    wait = getattr(exc, "wait", None)  # Throttled sets it; the stubs do not declare it
    if isinstance(exc, exceptions.Throttled) and wait is not None:
        # DRF rounds the wait up and sends it as Retry-After: the message says the same number
        seconds = max(1, int(wait))
        message = f"too many requests; try again in {seconds} second{'' if seconds == 1 else 's'}"
        response.data = {"errors": [{"field": "", "message": message}]}
    else:
        response.data = {"errors": _flatten(response.data)}
    return response
