"""Why a sweep's rows have no plan, at rest (estimator.plan.batch_reasons): the reason columns of a
chunk stored before them (read-time, here only), and each reason sentence's rows, code and refused
group's errors in a chunk's digest and in the sweep's summary (the sweep page reads the summary).
Pure functions of arrays and digests; no database access."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from estimator.plan import batch_reasons
from estimator.plan.batch_reasons import REASON_CARDS_FIELD, REASON_CODE_FIELD, REASON_ERRORS_FIELD

ERROR = "error"  # per-row message (None where the row was planned); stored as codes + messages
SENTENCES_KEPT = 10  # reasons a digest and a summary keep (the most rows first)
SENTENCE_CHARS = 500  # characters of a reason sentence kept


def with_message(messages: np.ndarray) -> np.ndarray:
    """Positions of the elements that are not None (one C-level comparison per element)."""
    return np.flatnonzero(np.not_equal(np.asarray(messages, dtype=object), np.array(None, dtype=object)))


def with_reasons(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A chunk stored before the reason columns with them, read from what it holds: the code of its
    English sentence (batch_reasons.codes_of), no cards, no group errors (its sentence alone)."""
    if ERROR in arrays and REASON_CODE_FIELD not in arrays:  # a chunk stored before the reason codes
        arrays[REASON_CODE_FIELD] = batch_reasons.codes_of(arrays[ERROR])
        arrays[REASON_CARDS_FIELD] = np.full(len(arrays[ERROR]), np.nan)
    if ERROR in arrays and REASON_ERRORS_FIELD not in arrays:  # ... or before the group errors
        arrays[REASON_ERRORS_FIELD] = np.full(len(arrays[ERROR]), None, dtype=object)
    return arrays


def message_codes(messages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 code per row, -1 where None; the distinct messages in order of first appearance).
    Only the rows with a message are visited one by one (usually few)."""
    messages = np.asarray(messages, dtype=object)
    distinct: list[str] = []
    codes = np.full(len(messages), -1, dtype=np.int32)
    seen: dict[str, int] = {}
    where = with_message(messages)
    for i, msg in zip(where.tolist(), messages[where].tolist(), strict=True):
        code = seen.get(msg)
        if code is None:
            code = seen[msg] = len(distinct)
            distinct.append(str(msg))
        codes[i] = code
    return codes, np.array(distinct or [""], dtype=str)


def chunk_reasons(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """A chunk's digest of its rows without a plan: `errors` (sentence, at most SENTENCE_CHARS:
    rows, the SENTENCES_KEPT with the most; ties in the sentences' sorted order, as np.unique of
    every row's sentence gave them), `error_codes` (sentence: code) and `error_details` (sentence:
    its refused group's FieldErrors, field, message, code and params, where it has them), each
    sentence's taken from its first row.

    Counted on the codes of the distinct sentences (message_codes: one dict look-up per row with a
    sentence), not by sorting every row's sentence: a 50,000-row chunk whose every row is refused
    held 20 MB of fixed-width text and sorted it (32.6 ms; 8.7 ms so)."""
    if ERROR not in arrays:
        return {"errors": {}}
    codes, distinct = message_codes(arrays[ERROR])
    where = np.flatnonzero(codes >= 0)
    if where.size == 0:
        return {"errors": {}, "error_codes": {}, "error_details": {}}
    coded = codes[where]
    first = np.unique(coded, return_index=True)[1]  # per distinct sentence, its first row in `where`
    order = np.argsort(distinct)  # by sentence, as np.unique gave them
    counts = np.bincount(coded, minlength=distinct.size)[order]
    top = np.argsort(-counts)[:SENTENCES_KEPT]
    kept = [str(distinct[order[i]])[:SENTENCE_CHARS] for i in top]
    rows = where[first[order[top]]].tolist()  # each kept sentence's first row
    n = len(codes)
    reasons = arrays.get(REASON_CODE_FIELD, np.full(n, "", dtype=str))
    errors = arrays.get(REASON_ERRORS_FIELD, np.full(n, None, dtype=object))
    return {
        "errors": {m: int(counts[i]) for m, i in zip(kept, top.tolist(), strict=True)},
        "error_codes": {m: str(reasons[r]) for m, r in zip(kept, rows, strict=True)},
        "error_details": {
            m: json.loads(errors[r]) for m, r in zip(kept, rows, strict=True) if isinstance(errors[r], str)
        },
    }


class ReasonFold:
    """The sweep summary's `errors` (the SENTENCES_KEPT with the most rows), `error_codes` and
    `error_details`, folded from its chunks' digests one at a time (sweeps.summary; the codes and
    details are absent from the digests of sweeps stored before). A sentence's code and group
    errors are the same in every chunk; the counts are the only state that grows, by distinct
    sentence, not by row."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.codes: dict[str, str] = {}
        self.details: dict[str, list] = {}

    def add(self, digest: dict) -> None:
        for msg, count in digest.get("errors", {}).items():
            self.counts[msg] = self.counts.get(msg, 0) + count
        self.codes.update(digest.get("error_codes", {}))
        self.details.update(digest.get("error_details", {}))

    def summary(self) -> dict[str, Any]:
        errors = dict(sorted(self.counts.items(), key=lambda kv: -kv[1])[:SENTENCES_KEPT])
        return {
            "errors": errors,
            "error_codes": {msg: self.codes[msg] for msg in errors if self.codes.get(msg)},
            "error_details": {msg: self.details[msg] for msg in errors if msg in self.details},
        }
