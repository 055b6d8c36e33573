"""OpenAPI helpers shared by the apps' APIs: the team parameter, the shape of a request's `callback`,
and the core's JSON Schema made self-contained for embedding in the OpenAPI document."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers

MAX_URL_CHARS = (
    2000  # a callback URL: the column integrations.models stores it in, checked by integrations.targets
)

TEAM_PARAMETER = OpenApiParameter(
    "team",
    OpenApiTypes.STR,
    description="Slug of one of your teams (GET /api/v1/teams): its members will see what you create. "
    "Absent: your only team (with several teams, or none, it stays yours alone); empty (`?team=`): yours "
    "alone. Not a team of yours: 400 on field `team`.",
)

IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="The ETag of a copy you have: 304 Not Modified, without a body, if it is still current.",
)

PAGE_PARAMETERS = [
    OpenApiParameter("page", OpenApiTypes.INT, description="1-based page number (past the last: 404)"),
    OpenApiParameter("page_size", OpenApiTypes.INT, description="Items per page (default 50, at most 200)"),
]


def paginated(name: str, item: type[serializers.Serializer]) -> serializers.Serializer:
    """The page DRF's PageNumberPagination serves: {count, next, previous, results}."""
    return inline_serializer(
        name,
        {
            "count": serializers.IntegerField(help_text="Items in all pages"),
            "next": serializers.URLField(allow_null=True, help_text="The next page, or null"),
            "previous": serializers.URLField(allow_null=True, help_text="The previous page, or null"),
            "results": item(many=True),
        },
    )


# `callback` of a sweep or a batch request, validated by integrations.callbacks (no docstring: it
# would become the component's description in the OpenAPI document)
class CallbackSerializer(serializers.Serializer):
    url = serializers.CharField(
        max_length=MAX_URL_CHARS,
        help_text="Where to POST the signed notification when it ends (https; no private or loopback "
        "addresses unless the site allows them). Needs an account: the signature uses your signing secret.",
    )


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace local `#/$defs/X` references by the definitions themselves (the scenario schema is
    not recursive), so the schema can sit inside an OpenAPI document whose root has no `$defs`."""
    defs = schema.get("$defs", {})

    def walk(node: Any, depth: int = 0) -> Any:
        if depth > 50:
            return {}
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
                merged = {**defs[ref[8:]], **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged, depth + 1)
            return {k: walk(v, depth + 1) for k, v in node.items() if k not in ("$defs", "$schema")}
        if isinstance(node, list):
            return [walk(v, depth + 1) for v in node]
        return node

    return walk(schema)
