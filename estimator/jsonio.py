"""Strict JSON for scenarios: plain JSON numbers only (no NaN, Infinity or overflow to inf).

Python's json module accepts NaN and Infinity literals and turns 1e400 into inf; a scenario
must not carry them, so this reader refuses them with a field-less ScenarioError.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import ScenarioError


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number")
    return value


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON text; raise ScenarioError (field "") naming the line and column of the fault."""
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise ScenarioError(f"invalid JSON: {exc}") from None


def to_jsonable(value: Any) -> Any:
    """numpy scalars/arrays and non-finite floats -> plain JSON values (inf/nan become None)."""
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
