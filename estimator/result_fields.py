"""The two field kinds of the typed result (estimator.plan.result) that the serialiser
(estimator.plan.serialise) reads from the fields' metadata: a JSON key that differs from the field's
name, and a field left out of the JSON when None."""

from __future__ import annotations

import dataclasses
from typing import Any


def json_key(name: str, *, omit_none: bool = False) -> Any:
    """A field whose JSON key is `name` (the contract's name, kept for stored results)."""
    return dataclasses.field(metadata={"json": name, "omit_none": omit_none})


OMIT = {"omit_none": True}  # left out of the JSON when None


def omitted(json: str | None = None) -> Any:
    """A field left out of the JSON when None (the contract has no key then), default None."""
    meta: dict[str, Any] = {"omit_none": True}
    if json is not None:
        meta["json"] = json
    return dataclasses.field(default=None, metadata=meta)
