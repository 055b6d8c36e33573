"""Bands earned from evidence: how far measured throughput has fallen from this engine's prediction,
for plans of the same class (docs/architecture.md#evidence-bands).

Every throughput row of the validation suites (megatron-2021, llama3-2024 and the published runs of
reference_data/throughput_runs.toml) is one observation of

    ratio = published throughput / predicted throughput        (dimensionless; < 1: the plan was fast)

classified by `plan_class`: the chip family (the generation attention kernels are known for), the
workload family ("moe" when the model has routed experts, else "long-context" from 32,768 tokens per
sequence, else "dense") and the software stack's id. `python -m estimator.validation.evidence
--update` writes the observations and, for every class and its parents, the band to
reference_data/evidence_bands.toml (tests/estimator/test_evidence.py checks the committed file is the
one the engine produces). Nothing is fitted: the band is the spread of the rows, not a correction.

The band of a class with n >= MIN_ROWS rows is the Student-t prediction interval of one more
observation of log(ratio) (Hahn & Meeker, "Statistical Intervals", 1991, sec. 4.7; 80 %: P10-P90):

    log ratio_P10, log ratio_P90 = m -/+ t(0.90, n - 1) * s * sqrt(1 + 1/n)

with m, s the mean and sample standard deviation of the class's log-ratios. A class with fewer rows
has no band of its own: it takes its parent's (family/workload/* -> */workload/* -> */*/*) and widens
it to hold its own rows' ratios, and says so. A plan is then widened where a figure it stands on is an
assumption: the catalog's `range` of the chip's peak FLOP/s (where sources disagree) scales the band's
ends by low/value and high/value; and where the stack's releases differ by more than the band (the
profile's release spread, measured on the same published layout across releases) its ends are scaled
by that spread (widen_for_release_spread); and where the plan's layout lies where validation rows
are documented as unexplained (a known gap, the rows' `gap` field), its ends are moved to hold those
rows' ratios (widen_for_known_gap).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

LONG_CONTEXT_TOKENS = 32_768  # from this sequence length a plan is of the long-context family
MIN_ROWS = 3  # the fewest rows a class needs for a band of its own
ANY = "*"
BANDS_FILE = Path(__file__).resolve().parent.parent / "reference_data" / "evidence_bands.toml"

# Student-t 0.90 quantiles by degrees of freedom (NIST/SEMATECH e-Handbook of Statistical Methods,
# table 1.3.6.7.2, "Critical values of the Student's t distribution", column 0.90); beyond the table the
# next smaller tabulated df is used (conservative), and the normal quantile 1.2816 from 120 on.
_T90 = {
    1: 3.078, 2: 1.886, 3: 1.638, 4: 1.533, 5: 1.476, 6: 1.440, 7: 1.415, 8: 1.397, 9: 1.383,
    10: 1.372, 11: 1.363, 12: 1.356, 13: 1.350, 14: 1.345, 15: 1.341, 16: 1.337, 17: 1.333,
    18: 1.330, 19: 1.328, 20: 1.325, 25: 1.316, 30: 1.310, 40: 1.303, 60: 1.296, 120: 1.289,
}  # fmt: skip
_Z90 = 1.2816


def t90(df: int) -> float:
    """The 0.90 quantile of Student's t with `df` degrees of freedom (dimensionless), df >= 1."""
    if df >= 120:
        return _Z90 if df > 120 else _T90[120]
    return _T90[max(k for k in _T90 if k <= df)]


def workload_family(num_experts: int, seq_len: int) -> str:
    """ "moe" for routed experts, else "long-context" from LONG_CONTEXT_TOKENS per sequence, else "dense"."""
    if num_experts > 0:
        return "moe"
    return "long-context" if seq_len >= LONG_CONTEXT_TOKENS else "dense"


def class_key(family: str, workload: str, stack: str) -> str:
    return f"{family}/{workload}/{stack}"


def parents(key: str) -> list[str]:
    """The key and its parents, most specific first: f/w/s, f/w/*, */w/*, */*/*."""
    family, workload, _stack = key.split("/")
    chain = [key, class_key(family, workload, ANY), class_key(ANY, workload, ANY), class_key(ANY, ANY, ANY)]
    return list(dict.fromkeys(chain))


def prediction_interval(log_ratios: list[float]) -> tuple[float, float]:
    """(ratio_P10, ratio_P90) of one more observation, from n >= 2 log-ratios (module docstring)."""
    n = len(log_ratios)
    if n < 2:
        raise ValueError("a prediction interval needs at least two observations")
    m = sum(log_ratios) / n
    s = math.sqrt(sum((x - m) ** 2 for x in log_ratios) / (n - 1))
    half = t90(n - 1) * s * math.sqrt(1.0 + 1.0 / n)
    return math.exp(m - half), math.exp(m + half)


@dataclass(frozen=True)
class Band:
    """P10-P90 of published/predicted throughput for a plan's class (dimensionless ratios)."""

    key: str  # the plan's class, family/workload/stack
    basis: str  # the class whose rows the interval comes from (the key itself or a parent)
    rows: int  # observations behind the interval
    own_rows: int  # observations of the plan's own class (also when fewer than MIN_ROWS)
    p10_ratio: float
    p90_ratio: float
    widened_by: tuple[str, ...] = ()  # codes: "few-rows" (own rows added to a parent), "peak-range",
    # "release-spread" (the stack's releases differ by more than the band), "known-gap" (the plan's
    # layout lies where validation rows are documented as unexplained: their ratios added)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "basis": self.basis,
            "rows": self.rows,
            "own_rows": self.own_rows,
            "p10_ratio": self.p10_ratio,
            "p90_ratio": self.p90_ratio,
            "widened_by": list(self.widened_by),
        }


@cache
def observations() -> dict[str, list[float]]:
    """Class key -> ratios of its rows, as committed in reference_data/evidence_bands.toml."""
    with BANDS_FILE.open("rb") as fh:
        data = tomllib.load(fh)
    out: dict[str, list[float]] = {}
    for row in data.get("rows", []):
        out.setdefault(str(row["key"]), []).append(float(row["ratio"]))
    return out


@cache
def gap_observations() -> dict[str, list[float]]:
    """Known-gap id -> ratios of the rows in that gap (their `gap` field in
    reference_data/evidence_bands.toml; estimator.layout.steptime.context_parallel.known_gap)."""
    with BANDS_FILE.open("rb") as fh:
        data = tomllib.load(fh)
    out: dict[str, list[float]] = {}
    for row in data.get("rows", []):
        if row.get("gap"):
            out.setdefault(str(row["gap"]), []).append(float(row["ratio"]))
    return out


def pooled(obs: dict[str, list[float]], key: str) -> list[float]:
    """Ratios of every row under `key` ("*" matches any part)."""
    want = key.split("/")
    return [
        r
        for k, ratios in obs.items()
        if all(w in (ANY, p) for w, p in zip(want, k.split("/"), strict=True))
        for r in ratios
    ]


def band_for(key: str, obs: dict[str, list[float]] | None = None) -> Band:
    """The band of class `key`: its own interval when it has MIN_ROWS rows, else its nearest parent's
    widened to hold the class's own ratios (module docstring)."""
    obs = observations() if obs is None else obs
    own = pooled(obs, key)
    for basis in parents(key):
        ratios = pooled(obs, basis)
        if len(ratios) >= MIN_ROWS:
            lo, hi = prediction_interval([math.log(r) for r in ratios])
            widened: tuple[str, ...] = ()
            if basis != key and own:
                lo, hi = min(lo, *own), max(hi, *own)
                widened = ("few-rows",)
            return Band(key, basis, len(ratios), len(own), lo, hi, widened)
    raise ValueError("the evidence file has fewer rows than one band needs")


def widen_for_peak_range(band: Band, peak_value: float, peak_range: tuple[float, float] | None) -> Band:
    """The band with its ends scaled by the catalog's disagreeing sources on peak FLOP/s (low/value,
    high/value): the achieved throughput scales with the peak the chip really has."""
    if peak_range is None or peak_value <= 0:
        return band
    low, high = peak_range
    if low >= peak_value and high <= peak_value:
        return band
    return Band(
        band.key,
        band.basis,
        band.rows,
        band.own_rows,
        band.p10_ratio * min(1.0, low / peak_value),
        band.p90_ratio * max(1.0, high / peak_value),
        (*band.widened_by, "peak-range"),
    )


def widen_for_known_gap(band: Band, gap_ratios: list[float]) -> Band:
    """The band widened to hold the ratios of the validation rows of a documented gap the plan's
    layout lies in (`gap_ratios`, published/predicted): the model does not explain those rows, so a
    plan like them can land where they did. Never narrowed; no rows (no gap) leaves it as it is."""
    if not gap_ratios:
        return band
    lo, hi = min(band.p10_ratio, *gap_ratios), max(band.p90_ratio, *gap_ratios)
    if lo >= band.p10_ratio and hi <= band.p90_ratio:
        return band
    return dataclasses.replace(band, p10_ratio=lo, p90_ratio=hi, widened_by=(*band.widened_by, "known-gap"))


def widen_for_release_spread(band: Band, spread: tuple[float, float]) -> Band:
    """The band widened where the stack's releases differ by more than it: `spread` is the (low, high)
    throughput of the same published layout on the profile's other releases relative to the one it
    stands for (StackProfile.spread_for). A plan on another release than the profile's lands anywhere
    in the band times that factor, so where low < p10 or high > p90 the ends are scaled by low and
    high (never narrowed); a spread inside the band leaves it as it is."""
    low, high = spread
    if low >= band.p10_ratio and high <= band.p90_ratio:
        return band
    return dataclasses.replace(
        band,
        p10_ratio=band.p10_ratio * min(1.0, low),
        p90_ratio=band.p90_ratio * max(1.0, high),
        widened_by=(*band.widened_by, "release-spread"),
    )
