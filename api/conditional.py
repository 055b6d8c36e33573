"""ETag and 304 on the API's immutable resources (a shared report, a price-book version): Django's
conditional GET (django.views.decorators.http.condition) with an ETag that names the stored object
and the address it is read through (the body's links are absolute), so If-None-Match answers 304
without rendering anything."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.utils.decorators import method_decorator
from django.views.decorators.http import condition


def etag(request, *parts: Any) -> str:
    """A strong validator of one representation: the object's identity and the host it is served
    from (the same object read through another host has other absolute links)."""
    text = "|".join([request.get_host(), request.scheme or "", *map(str, parts)])
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


def immutable(identity: Callable[..., tuple | None]) -> Callable:
    """Decorate an APIView's `get`: `identity(request, **url_kwargs)` is what never changes about
    the object, or None when it does not exist *for this caller* (no ETag, the view answers 404):
    it runs before the view's body, so it must apply the same visibility rule."""

    def etag_func(request, *_args, **kwargs) -> str | None:
        parts = identity(request, **kwargs)
        return None if parts is None else etag(request, *parts)

    return method_decorator(condition(etag_func=etag_func))
