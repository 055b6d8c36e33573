"""The scenario contract's building blocks (docs/architecture.md#scenario-contract): strict JSON
numbers (`Num`, `Int`: no strings, booleans, NaN or Infinity), the frozen section base (`_Section`,
unknown keys refused), the price-book reference pattern, and the mapping of a pydantic error onto
a dotted field path and one sentence (`_path`, `_message`). Used by `scenario` and its sections and
by `price_book`; pydantic only, nothing of the core.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import ErrorDetails

# "<team slug>/<book slug>" with an optional "@<version>": a price book (estimator.contract.price_book)
PRICE_BOOK_REFERENCE: Final = r"[a-z0-9][a-z0-9_-]{0,49}/[a-z0-9][a-z0-9_-]{0,49}(@[1-9][0-9]{0,8})?"


def _number(value: Any) -> Any:
    """JSON numbers only: refuse strings and booleans that lax parsing would coerce."""
    if isinstance(value, (bool, str)):
        raise ValueError("must be a JSON number, not a string or boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number (NaN and Infinity are not allowed)")
    return value


def _integer(value: Any) -> Any:
    value = _number(value)
    if isinstance(value, float):
        if value != int(value):
            raise ValueError("must be a whole number")
        return int(value)
    return value


def _book_reference(value: str) -> str:
    if re.fullmatch(PRICE_BOOK_REFERENCE, value) is None:
        raise ValueError("must be '<team>/<book>' or '<team>/<book>@<version>' (lowercase slugs)")
    return value


Num = Annotated[float, BeforeValidator(_number)]
Int = Annotated[int, BeforeValidator(_integer)]


def _pos(le: float, **kw: Any) -> Any:
    return Field(gt=0, le=le, **kw)


class _Section(BaseModel):
    # defer_build: a model's validator is built when it first validates, not when its module is
    # imported: the CLI and a worker pay only for the models they use (issue 27, cold start)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


def _path(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if not (isinstance(p, str) and p in {"str", "InlineAccelerator"})]
    return ".".join(parts)


def _message(err: ErrorDetails) -> str:
    msg = str(err.get("msg", "is invalid"))
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    if err.get("type") == "extra_forbidden":
        return "is not a field of the scenario contract"
    if err.get("type") == "missing":
        return "is required"
    return msg[0].lower() + msg[1:] if msg else msg


# pydantic's range error types -> the contract's code (FieldError.code) and the ctx key of the limit
_RANGE_CODES: Final = {
    "greater_than": ("must-be-greater-than", "gt"),
    "greater_than_equal": ("must-be-at-least", "ge"),
    "less_than": ("must-be-less-than", "lt"),
    "less_than_equal": ("must-be-at-most", "le"),
}
# the contract's own sentences (`_message`, `_number`, `_integer`) -> their codes
_SENTENCE_CODES: Final = {
    "is required": "is-required",
    "is not a field of the scenario contract": "not-a-scenario-field",
    "must be a JSON number, not a string or boolean": "must-be-json-number",
    "must be a finite number (NaN and Infinity are not allowed)": "must-be-finite",
    "must be a whole number": "must-be-whole-number",
    "give exactly one of cluster.cards (how long?), cluster.target_days (how many cards?) "
    "or cluster.budget (what does it buy?)": "cluster-exactly-one",
    "must be '<team>/<book>' or '<team>/<book>@<version>' (lowercase slugs)": "must-be-book-reference",
}


def _code(err: ErrorDetails, message: str) -> tuple[str, dict[str, Any]]:
    """The code and parameters of a pydantic error, so the web layer can say `message` in the
    reader's language (FieldError.code/params); ("", {}) for a sentence without one."""
    kind = _RANGE_CODES.get(str(err.get("type")))
    limit = (err.get("ctx") or {}).get(kind[1]) if kind else None
    if kind and isinstance(limit, int | float) and not isinstance(limit, bool):
        return kind[0], {"limit": limit}
    if str(err.get("type", "")).startswith("int_") and message.startswith("input should be a valid integer"):
        return "must-be-whole-number", {}
    expected = (err.get("ctx") or {}).get("expected")
    if err.get("type") == "literal_error" and isinstance(expected, str):  # "'USD' or 'CNY'"
        return "must-be-one-of", {"choices": re.findall(r"'([^']*)'", expected)}
    code = _SENTENCE_CODES.get(message, "")
    return code, {}
