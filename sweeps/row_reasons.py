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


def chunk_reasons(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """A chunk's digest of its rows without a plan: `errors` (sentence: rows, the SENTENCES_KEPT
    with the most), `error_codes` (sentence: code) and `error_details` (sentence: its refused group's
    FieldErrors, field, message, code and params, where it has them)."""
    if ERROR not in arrays:
        return {"errors": {}}
    messages = np.asarray(arrays[ERROR], dtype=object)
    where = with_message(messages)
    msgs, firsts, counts = np.unique(
        np.array(messages[where].tolist(), dtype=str), return_index=True, return_counts=True
    )
    top = np.argsort(-counts)[:SENTENCES_KEPT]
    kept = [str(msgs[i])[:SENTENCE_CHARS] for i in top]
    rows = where[firsts[top]].tolist()  # each sentence's first row
    codes = arrays.get(REASON_CODE_FIELD, np.full(len(messages), "", dtype=str))
    errors = arrays.get(REASON_ERRORS_FIELD, np.full(len(messages), None, dtype=object))
    return {
        "errors": {m: int(counts[i]) for m, i in zip(kept, top.tolist(), strict=True)},
        "error_codes": {m: str(codes[r]) for m, r in zip(kept, rows, strict=True)},
        "error_details": {
            m: json.loads(errors[r]) for m, r in zip(kept, rows, strict=True) if isinstance(errors[r], str)
        },
    }


def merged_reasons(digests: list[dict]) -> dict[str, Any]:
    """The sweep summary's `errors` (the SENTENCES_KEPT with the most rows), `error_codes` and
    `error_details` of its chunks' digests (absent from the digests of sweeps stored before)."""
    counts: dict[str, int] = {}
    codes: dict[str, str] = {}
    details: dict[str, list] = {}
    for d in digests:
        for msg, count in d.get("errors", {}).items():
            counts[msg] = counts.get(msg, 0) + count
        codes.update(d.get("error_codes", {}))  # a sentence's code: the same in every chunk
        details.update(d.get("error_details", {}))  # ... and its group's errors
    errors = dict(sorted(counts.items(), key=lambda kv: -kv[1])[:SENTENCES_KEPT])
    return {
        "errors": errors,
        "error_codes": {msg: codes[msg] for msg in errors if codes.get(msg)},
        "error_details": {msg: details[msg] for msg in errors if msg in details},
    }
