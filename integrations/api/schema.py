"""OpenAPI: the Idempotency-Key header (integrations.idempotency) documented on every POST and PUT, with
the 409 it can answer (a drf-spectacular post-processing hook, so a POST added later has it too)."""

from __future__ import annotations

from typing import Any

from integrations.idempotency import HEADER, KEY

DESCRIPTION = (
    "Optional. A repeat of this request with the same key within 24 hours (same caller: your user, or your "
    "address without an account) answers the first response again (status, body, Location, and the "
    "header Idempotent-Replayed: true) instead of doing the work twice. The same key with a different "
    "body answers 409, as does a repeat while the first request is still running. "
    "Use a new random key (a UUID) per distinct request; reuse it only to retry."
)


def document_idempotency_key(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict:
    parameter = {
        "in": "header",
        "name": HEADER,
        "required": False,
        "description": DESCRIPTION,
        "schema": {"type": "string", "minLength": 16, "maxLength": 255, "pattern": f"^{KEY.pattern}$"},
    }
    for operations in result.get("paths", {}).values():
        for method in ("post", "put"):
            if method in operations:
                _document(operations[method], parameter)
    return result


def _document(operation: dict[str, Any], parameter: dict[str, Any]) -> None:
    operation.setdefault("parameters", []).append(parameter)
    operation.setdefault("responses", {}).setdefault(
        "409",
        {
            "description": "The Idempotency-Key was used for a different request, or its first "
            "request is still running (see Retry-After)",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        },
    )
