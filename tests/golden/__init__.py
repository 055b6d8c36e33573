"""Golden results: the engine's answers for a fixed set of scenarios, so that a change of results
cannot go unnoticed, and cannot land without an ENGINE_VERSION bump and a CHANGELOG.md entry.

Files (beside this module):
- scenarios.json: the fixed scenarios (dense, MoE, Ascend, deadline, cards, MFU given or predicted).
- results.json: per scenario, every number, flag and code of `estimator.plan.compose.estimate`'s result,
  flattened to dotted paths (English message text is left out: wording is not a result).
- versions.json: engine version -> digest of results.json's figures. A version's digest never
  changes once recorded, so new results need a new version.

Regenerate after an intended change of results (see CHANGELOG.md for the steps):
    python -m tests.golden --update
It refuses when the figures moved but ENGINE_VERSION did not, or CHANGELOG.md has no entry for it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCENARIOS = HERE / "scenarios.json"
RESULTS = HERE / "results.json"
VERSIONS = HERE / "versions.json"
CHANGELOG = ROOT / "CHANGELOG.md"

SIGNIFICANT = 6  # figures are stored and compared to 6 significant digits
TEXT_KEYS = {"message", "suggestion", "reason", "source", "name", "accelerator"}  # wording, not results


def _round(x: float) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{SIGNIFICANT}g}")


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Dotted path -> leaf (numbers rounded; text fields in TEXT_KEYS dropped)."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in TEXT_KEYS:
                flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            flatten(item, f"{prefix}.{i}", out)
    elif isinstance(value, float):
        out[prefix] = _round(value)
    else:
        out[prefix] = value
    return out


def compute() -> dict[str, dict[str, Any]]:
    """Scenario name -> flattened result, computed now."""
    from estimator.plan.compose import estimate

    scenarios = json.loads(SCENARIOS.read_text(encoding="utf-8"))
    return {name: flatten(estimate(data)["result"]) for name, data in scenarios.items()}


def digest(results: dict[str, dict[str, Any]]) -> str:
    text = json.dumps(results, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def changelog_versions() -> list[str]:
    """Versions with a `## x.y.z` heading in CHANGELOG.md, newest first."""
    text = CHANGELOG.read_text(encoding="utf-8") if CHANGELOG.exists() else ""
    return re.findall(r"^## \[?(\d+\.\d+\.\d+)\]?", text, flags=re.MULTILINE)
