"""The sentence of one of the core's field errors (estimator.errors.FieldError) in the reader's
language, for the apps below reports (price books, teams), which cannot import its message
catalogue (reports imports them). reports registers its renderer (reports.messages.scenario_error)
when Django loads the apps (reports.apps); before that, and in the core's own tools, the core's
English sentence is the text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_renderer: list[Callable[[Any], str]] = []


def register(renderer: Callable[[Any], str]) -> None:
    """The catalogue's renderer of a FieldError (code + params, else the sentence); one at a time."""
    _renderer[:] = [renderer]


def field_text(err: Any) -> str:
    """`err` (a FieldError) in the active language: the registered renderer, else err.message."""
    return _renderer[0](err) if _renderer else str(err.message)
