"""OpenAPI post-processing: the answers every operation can give because of the conventions
(api.conventions), described once here rather than on each view, so the document says what the
server does (schemathesis checks it, tests/fuzz/test_schemathesis.py):

- errors in the one shape: 400 (a body, a query or a header such as Idempotency-Key), 401 (a refused token, on any operation), 404
  (a path with an id), 406 (an Accept the API cannot answer), 413/415 (a body too large, or not
  JSON), 429 (with Retry-After);
- headers: X-Request-Id on every response; the RateLimit fields where a rate applies; Location on
  every 201; ETag on the immutable resources' 200.
"""

from __future__ import annotations

from typing import Any

ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
METHODS = ("get", "post", "put", "patch", "delete")

HEADERS = {
    "X-Request-Id": {
        "description": "The request's id: yours when you sent a usable one (8-128 of A-Z a-z 0-9 . _ : + / = -), "
        "else generated. Quote it when you report a problem.",
        "schema": {"type": "string"},
        "required": True,
    },
    "RateLimit-Policy": {
        "description": 'The rates that apply (IETF RateLimit fields): `"<policy>";q=<requests>;w=<seconds>`, comma-separated.',
        "schema": {"type": "string"},
    },
    "RateLimit": {
        "description": 'What is left of each: `"<policy>";r=<remaining>;t=<seconds until a request frees up>`.',
        "schema": {"type": "string"},
    },
}
RETRY_AFTER = {
    "description": "Seconds to wait before retrying.",
    "schema": {"type": "integer"},
    "required": True,
}
LOCATION = {"description": "The address of what was created.", "schema": {"type": "string"}, "required": True}
ETAG = {
    "description": "Validator for If-None-Match (the resource never changes).",
    "schema": {"type": "string"},
}
DEPRECATION = {
    "Deprecation": {
        "description": "RFC 9745: when a field of this response was deprecated (@<unix seconds>).",
        "schema": {"type": "string"},
    },
    "Sunset": {
        "description": "RFC 8594: after this HTTP-date the deprecated field may go.",
        "schema": {"type": "string"},
    },
    "Link": {
        "description": 'rel="deprecation": where the replacement is described.',
        "schema": {"type": "string"},
    },
}

COMMON = {
    "401": "Authentication refused: an unknown, revoked or expired token, or none where one is needed",
    "406": "The Accept header names no type the API answers (application/json)",
    "429": "Too many requests: wait Retry-After seconds",
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": ERROR}


def _add_errors(operation: dict[str, Any], path: str) -> None:
    responses = operation.setdefault("responses", {})
    wanted = dict(COMMON)
    params = [p for p in operation.get("parameters", []) if p.get("in") in ("query", "header")]
    if "requestBody" in operation or params:
        wanted["400"] = "Invalid input: every error with its field path"
    if "requestBody" in operation:
        wanted["413"] = "The body is larger than the limit"
        wanted["415"] = "The body is not JSON (Content-Type: application/json)"
    if "{" in path:
        wanted["404"] = "No such resource, or not yours (existence is not disclosed)"
    for status, description in wanted.items():
        responses.setdefault(status, _error(description))


def _add_headers(operation: dict[str, Any], path: str, method: str, etag_ops: set[str]) -> None:
    for status, response in operation.get("responses", {}).items():
        headers = response.setdefault("headers", {})
        headers.update(HEADERS)
        if status == "429":
            headers["Retry-After"] = RETRY_AFTER
        if status == "201":
            headers["Location"] = LOCATION
        if status == "200" and operation.get("operationId") in etag_ops:
            headers["ETag"] = ETAG
        if status == "200" and method == "get" and path.rstrip("/") == "/api/v1/estimates":
            headers.update(DEPRECATION)


def document_conventions(result: dict[str, Any], **_hook_kwargs: Any) -> dict:
    etag_ops = {"reports_retrieve", "price_book_versions_retrieve"}
    for path, operations in result.get("paths", {}).items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            _add_errors(operation, path)
            _add_headers(operation, path, method, etag_ops)
    return result
