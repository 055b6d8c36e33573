"""A JSON parser that accepts strict JSON only (the core's reader, estimator.jsonio: no NaN/Infinity
literals, no numbers beyond float range, no duplicate keys, bounded nesting, no NUL or lone
surrogates), with a bounded body size. Every refusal is a 400 naming the field path where there is
one (a ScenarioError, see api.exceptions) or the body as a whole (ParseError)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from estimator.jsonio import loads_strict
from estimator.limits import MAX_BODY_BYTES


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
        return loads_strict(text)  # ScenarioError (with the field path) -> 400 in api.exceptions
