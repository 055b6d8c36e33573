"""A JSON parser that accepts strict JSON only (the core's reader: no NaN/Infinity literals, no
numbers beyond float range), with a bounded body size. Every refusal is a ParseError -> 400."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from estimator.errors import ScenarioError
from estimator.jsonio import loads_strict

MAX_BODY_BYTES = 1_000_000


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = getattr(settings, "API_MAX_BODY_BYTES", MAX_BODY_BYTES)
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise ParseError(f"the body is larger than {limit} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("the body is not UTF-8 text") from None
        try:
            return loads_strict(text)
        except ScenarioError as exc:
            raise ParseError(str(exc.errors[0].message)) from None
