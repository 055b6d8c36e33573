"""The one error type of the core: every rejection names a field path and a sentence."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One fault of a scenario: the dotted field, a sentence, and a code with parameters for translation."""

    field: str  # dotted path into the scenario, e.g. "training.tokens"
    message: str  # one sentence a person can act on (the English default)
    # for a refusal the web layer renders in the reader's language: its code and parameters
    code: str = ""
    params: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"field": self.field, "message": self.message}
        if self.code:
            out.update(code=self.code, params=self.params)
        return out


class ScenarioError(ValueError):
    """Raised for any input the core cannot plan; carries one or more FieldErrors."""

    def __init__(self, errors: list[FieldError] | FieldError | str, field: str = ""):
        if isinstance(errors, str):
            errors = [FieldError(field, errors)]
        elif isinstance(errors, FieldError):
            errors = [errors]
        self.errors: list[FieldError] = list(errors)
        super().__init__("; ".join(f"{e.field or '(root)'}: {e.message}" for e in self.errors))

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {"errors": [e.to_dict() for e in self.errors]}


def not_an_object(message: str, field: str = "") -> ScenarioError:
    """The refusal of a document (scenario, run, price book, sweep body) that is not a JSON
    object: its English sentence, one code for the web layer ("must-be-json-object")."""
    return ScenarioError(FieldError(field, message, code="must-be-json-object"))
