"""Strict JSON for scenarios: plain JSON numbers only (no NaN, Infinity or overflow to inf), no
duplicate keys, bounded nesting, and text a database can store (no NUL, no lone surrogates).

Python's json module accepts NaN and Infinity literals, turns 1e400 into inf, keeps the last of two
equal keys and decodes "\\ud800" to a lone surrogate that PostgreSQL (and UTF-8) cannot store; a
scenario must not carry any of them, so this reader refuses them with a ScenarioError naming the
field path. `check_tree` applies the same rules to objects that arrive already parsed.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from estimator import limits
from estimator.errors import FieldError, ScenarioError

_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")


class _NotANumber:
    """A number JSON cannot carry, left in the parsed tree where it stood so `check_tree` refuses it
    with its field path (`code`: the FieldError code, `text` as written)."""

    __slots__ = ("code", "sentence", "text")

    def __init__(self, code: str, text: str, sentence: str):
        self.code, self.text, self.sentence = code, text, sentence

    def error(self, path: str) -> FieldError:
        return FieldError(path, f"invalid JSON: {self.sentence}", self.code, {"text": self.text})


def _constant(name: str) -> Any:
    return _NotANumber("json-not-a-number", name, f"{name} is not a JSON number")


def _float(text: str) -> Any:
    value = float(text)
    if not math.isfinite(value):
        return _NotANumber("json-number-too-large", text, f"{text} is too large for a number")
    return value


class _Duplicate(dict[str, Any]):
    """An object that had a key twice (`key` names it); found by `check_tree` with its path."""

    key: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    dup = _Duplicate(out)
    for key, _value in pairs:
        if key in seen:
            dup.key = key
            break
        seen.add(key)
    return dup


def loads_strict(text: str | bytes, max_depth: int = limits.MAX_JSON_DEPTH) -> Any:
    """Parse JSON text and `check_tree` it; raise ScenarioError naming the line and column of a
    syntax fault, or the field path of a duplicate key, a nesting too deep, unstorable text or a
    number JSON cannot carry (NaN, Infinity, 1e400: kept as markers by the parse, refused here)."""
    try:
        data = json.loads(text, parse_constant=_constant, parse_float=_float, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        where = {"line": exc.lineno, "column": exc.colno, "detail": exc.msg}
        message = f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        raise ScenarioError(FieldError("", message, "invalid-json", where)) from None
    except RecursionError:
        message = f"invalid JSON: nested more than {max_depth} levels deep"
        raise ScenarioError(FieldError("", message, "json-too-deep", {"depth": max_depth})) from None
    except ValueError as exc:
        raise ScenarioError(f"invalid JSON: {exc}") from None
    check_tree(data, max_depth=max_depth)
    return data


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored or shown, or None: NUL characters and lone UTF-16 surrogates."""
    found = _BAD_TEXT.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (\\u0000), which is not allowed in text"
    return "contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode text"


def check_tree(data: Any, max_depth: int = limits.MAX_JSON_DEPTH, root: str = "") -> None:
    """Refuse, with the field path, what no part of the product can store or should process:
    objects and arrays nested deeper than `max_depth`, duplicate keys and numbers JSON cannot carry
    (both marked by `loads_strict`), keys longer than limits.MAX_KEY_CHARS, and NUL or lone
    surrogates in any key or string. Iterative, so a deep tree cannot exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(data, root, 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, dict | list) and depth >= max_depth:
            message = f"is nested more than {max_depth} levels deep"
            raise ScenarioError(FieldError(path, message, "json-too-deep", {"depth": max_depth}))
        if isinstance(node, _NotANumber):
            raise ScenarioError(node.error(path))
        if isinstance(node, _Duplicate):
            message = "is given twice in the same object; give each key once"
            raise ScenarioError(FieldError(_join(path, node.key), message, "duplicate-key"))
        if isinstance(node, dict):
            for key, value in node.items():
                key = str(key)
                if len(key) > limits.MAX_KEY_CHARS:
                    raise ScenarioError(
                        f"is a key longer than {limits.MAX_KEY_CHARS} characters", _join(path, key[:40])
                    )
                if problem := text_problem(key):
                    raise ScenarioError(f"a key {problem}", _join(path, ascii(key)[1:-1][:40]))
                stack.append((value, _join(path, key), depth + 1))
        elif isinstance(node, list):
            stack.extend((value, _join(path, i), depth + 1) for i, value in enumerate(node))
        elif isinstance(node, str) and (problem := text_problem(node)):
            raise ScenarioError(problem, path)


def to_jsonable(value: Any) -> Any:
    """numpy scalars/arrays and non-finite floats -> plain JSON values (inf/nan become None)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:  # most leaves: as they are
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    import numpy as np  # numpy is a core requirement (requirements.txt)

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if np is not None:
        if isinstance(value, np.ndarray):
            return to_jsonable(value.tolist())
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            value = float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
