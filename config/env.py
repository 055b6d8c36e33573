"""Strict readers of environment variables (in the style of healthchecks' settings): a value that
is not one of the documented spellings stops the start with ImproperlyConfigured naming the
variable, instead of silently meaning something else (`SECURE_HTTPS=Flase` must not turn HSTS off).

An unset or empty variable means its default (compose files pass `NAME=` for "not set"). Every
variable read here is listed in README.md#configuration, from which scripts/env_example.py writes
.env.example. `env` defaults to os.environ; tests and config.oidc pass their own mapping.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})
# DRF's rates: a count per second, minute, hour or day (rest_framework.throttling parse_rate)
RATE = re.compile(r"[0-9]+/(s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?)")


def _raw(name: str, env: Mapping[str, str] | None) -> str | None:
    value = (os.environ if env is None else env).get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def _refuse(name: str, raw: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}={raw!r}: {expected}")


def env_str(name: str, default: str = "", *, env: Mapping[str, str] | None = None) -> str:
    """The value as given (a secret keeps its every character); blank means the default."""
    value = (os.environ if env is None else env).get(name)
    return default if value is None or not value.strip() else value


def env_bool(name: str, default: bool, *, env: Mapping[str, str] | None = None) -> bool:
    """1/0, true/false, yes/no, on/off in any case; anything else is refused."""
    raw = _raw(name, env)
    if raw is None:
        return default
    if raw.lower() in TRUE:
        return True
    if raw.lower() in FALSE:
        return False
    raise _refuse(name, raw, "expected one of 1/0, true/false, yes/no, on/off")


def _bounded(name: str, raw: str, value: float, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and value < minimum:
        raise _refuse(name, raw, f"must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise _refuse(name, raw, f"must be at most {maximum}")


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """A whole number (digits, an optional sign) within [minimum, maximum]; the default is not checked."""
    raw = _raw(name, env)
    if raw is None:
        return default
    if not re.fullmatch(r"[+-]?[0-9]+", raw):
        raise _refuse(name, raw, "expected a whole number")
    value = int(raw)
    _bounded(name, raw, value, minimum, maximum)
    return value


def env_float(
    name: str,
    default: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    env: Mapping[str, str] | None = None,
) -> float:
    """A finite decimal number (no nan, no inf) within [minimum, maximum]."""
    raw = _raw(name, env)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise _refuse(name, raw, "expected a number") from None
    if not math.isfinite(value):
        raise _refuse(name, raw, "expected a finite number")
    _bounded(name, raw, value, minimum, maximum)
    return value


def env_list(name: str, default: str = "", *, env: Mapping[str, str] | None = None) -> list[str]:
    """Comma-separated values, each stripped, empty ones dropped (`default` is written the same way)."""
    raw = _raw(name, env)
    return [item.strip() for item in (default if raw is None else raw).split(",") if item.strip()]


def env_rate(name: str, default: str, *, env: Mapping[str, str] | None = None) -> str:
    """A throttle rate such as 120/minute (else DRF would fail on the first request, not at start)."""
    raw = _raw(name, env)
    if raw is None:
        return default
    if not RATE.fullmatch(raw):
        raise _refuse(name, raw, "expected <count>/<second|minute|hour|day>, e.g. 120/minute")
    return raw
