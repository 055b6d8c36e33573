"""The core's field errors in the reader's language: the codes estimator.contract.fields and
estimator.jsonio put on a FieldError (range limits, JSON numbers, strict JSON) with their English
msgids, and the English sentences without a code (sweep rows) that map onto the same codes."""

from __future__ import annotations

import re

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

FIELD_MESSAGES: dict[str, str] = {
    "must-be-greater-than": gettext_noop("must be greater than %(limit)s"),
    "must-be-at-least": gettext_noop("must be at least %(limit)s"),
    "must-be-less-than": gettext_noop("must be less than %(limit)s"),
    "must-be-at-most": gettext_noop("must be at most %(limit)s"),
    "is-required": gettext_noop("is required"),
    "not-a-scenario-field": gettext_noop("is not a field of the scenario contract"),
    "not-a-model-field": gettext_noop(
        "is not a model field or a config.json name the estimator reads; remove it"
    ),
    "must-be-json-object": gettext_noop("must be a JSON object"),
    "must-be-json-number": gettext_noop("must be a JSON number, not a string or boolean"),
    "must-be-finite": gettext_noop("must be a finite number (NaN and Infinity are not allowed)"),
    "must-be-whole-number": gettext_noop("must be a whole number"),
    "invalid-json": gettext_noop("invalid JSON at line %(line)s, column %(column)s: %(detail)s"),
    "json-too-deep": gettext_noop("is nested more than %(depth)s levels deep"),
    "json-not-a-number": gettext_noop("invalid JSON: %(text)s is not a JSON number"),
    "json-number-too-large": gettext_noop("invalid JSON: %(text)s is too large for a number"),
    "duplicate-key": gettext_noop("is given twice in the same object; give each key once"),
    "unknown-catalog-entry": gettext_noop("%(id)s is not in the catalog; known: %(known)s"),
    "cluster-exactly-one": gettext_noop(
        "give exactly one of cluster.cards (how long?), cluster.target_days (how many cards?) "
        "or cluster.budget (what does it buy?)"
    ),
    "batch-below-one-sequence": gettext_noop("must be at least one sequence (%(tokens)s tokens)"),
    "must-be-one-of": gettext_noop("must be one of %(choices)s"),
    "not-a-measurement-field": gettext_noop("is not a field of the measurement"),
    "parts-exceed-step-time": gettext_noop(
        "compute, communication and data loading add up to more than the step time"
    ),
    "not-a-price-book-field": gettext_noop("is not a field of a price book"),
    "must-be-book-reference": gettext_noop(
        "must be '<team>/<book>' or '<team>/<book>@<version>' (lowercase short names)"
    ),
    "unknown-catalog-id": gettext_noop("%(id)s is not an id of the catalog"),
    # estimator.contract.resolve._check_confidence; the web text names no field path
    "confidence-needs-deadline": gettext_noop(
        "needs a deadline in days: it is the chance of finishing by the deadline"
    ),
    # estimator.contract.sweep._check_searches (limits.MAX_SWEEP_CONFIDENT_SIZINGS)
    "too-many-confident-sizings": gettext_noop(
        "sizing for a chance of meeting the deadline searches each of the %(sizings)s combinations "
        "of the axes other than prices; the limit is %(max_sizings)s per sweep: sweep fewer values"
    ),
    # estimator.contract.sweep._check_searches (limits.MAX_SWEEP_BUDGET_SIZINGS)
    "too-many-budget-sizings": gettext_noop(
        "sizing by budget searches each of the %(sizings)s combinations of the axes other than "
        "running prices; the limit is %(max_sizings)s per sweep: sweep fewer values"
    ),
    # estimator.contract.sweep.parse_axes: the axes a builder or a JSON sweep may ask
    "axis-repeated-values": gettext_noop("has repeated values"),
    "axis-too-many-values": gettext_noop("has %(values)s values; the limit is %(max_values)s per axis"),
    "range-step-not-positive": gettext_noop("the step must be positive"),
    "range-stop-below-start": gettext_noop("the end of the range must not be below its start"),
    # sweeps.services._range_problem
    "range-too-many-values": gettext_noop(
        "the step gives more than %(max_values)s values; the limit per axis"
    ),
    "range-step-too-small": gettext_noop(
        "the step is too small for these numbers: some values would be equal"
    ),
    "axes-exclusive": gettext_noop("cannot be swept together with %(other_axis)s"),
    "too-many-scenarios": gettext_noop(
        "the axes make %(scenarios)s scenarios; the limit is %(max_scenarios)s per sweep"
    ),
}

# the core's English sentences that arrive without a code (a sweep row's error) -> (pattern, code);
# a pattern's one group is the limit
SENTENCES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^input should be less than or equal to (\S+)$"), "must-be-at-most"),
    (re.compile(r"^input should be less than (\S+)$"), "must-be-less-than"),
    (re.compile(r"^input should be greater than or equal to (\S+)$"), "must-be-at-least"),
    (re.compile(r"^input should be greater than (\S+)$"), "must-be-greater-than"),
    (re.compile(r"^is required$"), "is-required"),
    (re.compile(r"^is not a field of the scenario contract$"), "not-a-scenario-field"),
    (re.compile(r"^input should be a valid integer.*$"), "must-be-whole-number"),
    (re.compile(r"^must be a whole number$"), "must-be-whole-number"),
]

# Python's json decoder's faults (json.decoder), the `detail` of "invalid-json"
JSON_DETAILS = {
    gettext_noop("Expecting value"),
    gettext_noop("Expecting property name enclosed in double quotes"),
    gettext_noop("Expecting ',' delimiter"),
    gettext_noop("Expecting ':' delimiter"),
    gettext_noop("Unterminated string starting at"),
    gettext_noop("Invalid control character at"),
    gettext_noop("Invalid \\escape"),
    gettext_noop("Invalid \\uXXXX escape"),
    gettext_noop("Extra data"),
}


def json_detail(text: object) -> str:
    """A json decoder fault in the reader's language (as it is when not one of the known ones)."""
    return _(str(text)) if text in JSON_DETAILS else str(text)
