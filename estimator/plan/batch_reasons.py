"""Why a sweep row has no plan (plan.batch): a reason code per question, the code a single plan's
refusal carries where the question is the same (so one question has one code everywhere), its
parameter (REASON_CARDS_FIELD) and the English default made from the code (REASONS: the row's
"error", read by the CLI, the API and the CSV). The web layer words the code in the reader's
language (reports.messages.row_reason).

The codes:
- deadline-needs-too-many-cards: the deadline needs more cards than the largest cluster the network
  builds, even without interruptions (plan.deadline_refusals.too_many_cards);
- no-feasible-layout: no parallel layout passes the rules and fits in HBM on the row's cards
  (plan.refusal; a single plan names the rules where none passes them, cards-split-into-no-layout,
  which the batch does not search for);
- run-never-finishes: the interruptions cost more than the time between them (plan.sizing.goodput_of);
- budget-buys-no-cluster: the budget does not buy the smallest cluster (money.budget.cards_for_budget);
- layout-or-fabric-refuses-cards: the fixed layout does not divide the row's cards, or the network
  cannot connect that many (the contract's fixed-layout-cards and cluster.network.design_fabric's
  refusal; the batch does not tell the two apart, and a single plan has no one code for both).
The rows of a group the core refuses as a whole carry its ScenarioError's code (group_code), its
own English sentence and its FieldErrors as a single estimate's error body gives them (field,
message, code, params: FieldError.to_dict), as JSON text (REASON_ERRORS_FIELD, group_errors; None
where the row has no such refusal, or where the text would be longer than ERRORS_MAX_CHARS: its
sentence then stands alone), so the web layer words them as it words the single plan's refusal.

The parameter, per row: the cards the reason is about (REASON_CARDS_FIELD; NaN where the row is
planned or has no code). The row's cards for no-feasible-layout, run-never-finishes and
layout-or-fabric-refuses-cards; the smallest cluster for budget-buys-no-cluster; the cards the
deadline needs without interruptions at the MFU the refusal states for deadline-needs-too-many-cards
(plan.deadline_refusals.cards_without_failures).

Rows stored before the codes carry only the English default: code_of maps it back when they are
read (sweeps.digests.unpack; the defaults are the sentences those rows hold: a default that changes
keeps its old sentence in STORED_SENTENCES).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import numpy.typing as npt

from estimator.errors import FieldError

TOO_LARGE = "deadline-needs-too-many-cards"
NO_LAYOUT = "no-feasible-layout"
NEVER_FINISHES = "run-never-finishes"
BUYS_NOTHING = "budget-buys-no-cluster"
NOT_BUILT = "layout-or-fabric-refuses-cards"

# code -> the English default (the sentence a row's "error" holds)
REASONS: dict[str, str] = {
    TOO_LARGE: "no plan: the deadline needs more cards than the largest cluster this network can build",
    NO_LAYOUT: "no plan: no parallel layout passes the rules and fits in HBM on these cards",
    NEVER_FINISHES: "no plan: the run never finishes, its interruptions cost more than the time between them",
    BUYS_NOTHING: "no plan: the budget does not buy the smallest cluster",
    NOT_BUILT: "no plan: the fixed layout does not divide the cards, or the fabric is too large",
}

# the row columns: the reason's code ("" where planned) and its parameter
REASON_CODE_FIELD = "reason_code"
REASON_CARDS_FIELD = "reason_cards"
REASON_FIELDS = (REASON_CODE_FIELD, REASON_CARDS_FIELD)
# a group's refusal: its FieldErrors as JSON text (object column, None where none; group_errors)
REASON_ERRORS_FIELD = "reason_errors"
ERRORS_MAX_CHARS = 2000  # a refusal's errors longer than this as JSON: none kept (the sentence alone)
CODE_DTYPE = "<U40"  # a code of at most 40 characters (the core's longest has 39), as the stack id

# the English sentences stored rows hold -> their code (rows stored before the codes)
STORED_SENTENCES: dict[str, str] = {sentence: code for code, sentence in REASONS.items()}


def default(code: str) -> str:
    """The English default of a batch reason `code` (REASONS)."""
    return REASONS[code]


def code_of(sentence: object) -> str:
    """The code of an English reason a row stored before the codes holds; "" for any other text
    (a group's ScenarioError: its own sentence) or none."""
    return STORED_SENTENCES.get(sentence, "") if isinstance(sentence, str) else ""


def group_code(errors: list[object]) -> str:
    """The code of a group's ScenarioError (its FieldErrors): their code where they share one, else ""."""
    codes = {str(getattr(e, "code", "") or "") for e in errors}
    return codes.pop()[:40] if len(codes) == 1 else ""


def group_errors(errors: list[FieldError]) -> str | None:
    """A group's ScenarioError's FieldErrors as JSON text (each its to_dict(): field, message, code,
    params); None where one cannot be written as JSON or the text is longer than ERRORS_MAX_CHARS."""
    try:
        text = json.dumps([e.to_dict() for e in errors], sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text if len(text) <= ERRORS_MAX_CHARS else None


def codes_of(sentences: npt.ArrayLike) -> npt.NDArray[np.str_]:
    """code_of for a column of stored reasons (None where planned), once per distinct sentence."""
    values = np.asarray(sentences, dtype=object)
    out = np.full(values.shape, "", dtype=CODE_DTYPE)
    where = np.flatnonzero(np.not_equal(values, np.array(None, dtype=object)))
    for text in {str(v) for v in values[where].tolist()}:
        code = code_of(text)
        if code:
            out[where[values[where] == text]] = code
    return out


def defaults(codes: npt.NDArray[np.str_]) -> npt.NDArray[np.object_]:
    """The English default of each row's code (None where there is none), once per distinct code."""
    out = np.full(codes.shape, None, dtype=object)
    for code in np.unique(codes[codes != ""]).tolist():
        out[codes == code] = default(code)
    return out


@dataclasses.dataclass(frozen=True)
class RowReasons:
    """The reasons of a group's rows without a plan (plan.batch_reasons): code ("" where none) and
    the cards it is about (NaN where none)."""

    codes: npt.NDArray[np.str_]
    cards: npt.NDArray[np.float64]

    def set(self, rows: npt.NDArray[np.bool_], code: str, cards: npt.ArrayLike) -> None:
        """`rows` get `code` and their `cards` (one per row of the group, or one for all), in place."""
        self.codes[rows] = code
        self.cards[rows] = np.broadcast_to(np.asarray(cards, dtype=float), self.cards.shape)[rows]
