"""The one error type of the core: every rejection names a field path and a sentence."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    field: str  # dotted path into the scenario, e.g. "training.tokens"
    message: str  # one sentence a person can act on

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


class ScenarioError(ValueError):
    """Raised for any input the core cannot plan; carries one or more FieldErrors."""

    def __init__(self, errors: list[FieldError] | FieldError | str, field: str = ""):
        if isinstance(errors, str):
            errors = [FieldError(field, errors)]
        elif isinstance(errors, FieldError):
            errors = [errors]
        self.errors: list[FieldError] = list(errors)
        super().__init__("; ".join(f"{e.field or '(root)'}: {e.message}" for e in self.errors))

    def to_dict(self) -> dict[str, list[dict[str, str]]]:
        return {"errors": [e.to_dict() for e in self.errors]}
