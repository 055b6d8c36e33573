"""The form's range checks, read off the scenario contract's bounds, with the limit in the reader's
number format (reports.formatting.bound: '10B' / '100亿', '1 × 10¹⁷'), not Python's '1e+17'."""

from __future__ import annotations

from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from django.core import validators
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from estimator.contract.scenario import Scenario

from . import formatting


class _ShownLimit:
    """Re-raises the validator's error with its limit formatted for the reader (Django fills
    %(limit_value)s with the bare float otherwise)."""

    limit_value: Any

    def __call__(self, value: Any) -> None:
        try:
            super().__call__(value)  # type: ignore[misc]
        except ValidationError as exc:
            params = {**(exc.params or {}), "limit_value": formatting.bound(self.limit_value)}
            raise ValidationError(exc.message, code=exc.code, params=params) from None


class _AtLeast(_ShownLimit, validators.MinValueValidator):
    pass


class _AtMost(_ShownLimit, validators.MaxValueValidator):
    pass


class _GreaterThan(_ShownLimit, validators.BaseValidator):
    message = _("Ensure this value is greater than %(limit_value)s.")
    code = "min_value"

    def compare(self, a, b):
        return a <= b


class _LessThan(_ShownLimit, validators.BaseValidator):
    message = _("Ensure this value is less than %(limit_value)s.")
    code = "max_value"

    def compare(self, a, b):
        return a >= b


def _scenario_field(path: str) -> Any:
    model: Any = Scenario
    info = None
    for part in path.split("."):
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return None
        info = fields[part]
        model = info.annotation
        args = [a for a in getattr(model, "__args__", ()) if hasattr(a, "model_fields")]
        model = args[0] if args else model
    return info


def range_validators(path: str) -> list:
    """Django validators for the scenario field's bounds, so a range error is reported by the form
    (all fields at once, in the reader's language) before the core is called."""
    info = _scenario_field(path)
    out: list = []
    for rule in getattr(info, "metadata", []) if info is not None else []:
        if isinstance(rule, Ge):
            out.append(_AtLeast(rule.ge))
        elif isinstance(rule, Gt):
            out.append(_GreaterThan(rule.gt))
        elif isinstance(rule, Le):
            out.append(_AtMost(rule.le))
        elif isinstance(rule, Lt):
            out.append(_LessThan(rule.lt))
    return out
