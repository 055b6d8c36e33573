"""Diagnose a measured training run against the model's breakdown of the same run.

The input is a scenario document with the run's `cluster.cards` (and its layout in `parallelism`,
searched where not fixed) plus `measured`: the step time and, where a profiler gave them, the
compute, communication-wait and data-loading times per step (seconds). The model evaluates the
same layout (estimator.layout.steptime) and the two are compared term by term:

- compute = the model's compute + optimizer + host overhead;
- communication = the exposed communication (estimator.plan.calibration.COMM_KEYS);
- data loading = 0 in the model (it assumes the loader's prefetch hides it);
- other = bubble + the slowdown overlapped communication inflicts (measured: what the step
  leaves after the parts given).

Findings are {code, severity, message, params} with an English default; the web layer renders
them in the reader's language (reports/messages.py). What they advise follows the source
article (section 5.1: split the step into compute and communication wait; above 30 % wait, suspect
the network first; 2.3 micro-batches per stage; 3.4 data loading; 4.2/7.2 RoCE checks; 5.4
memory), quoted in docs/diagnose.md. Units: seconds, shares of the step (dimensionless).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError, model_validator

from estimator import ENGINE_VERSION
from estimator.contract.fields import Num, _code, _Section
from estimator.contract.price_book import PriceBook
from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import FieldError, ScenarioError, not_an_object
from estimator.layout.problem import LayoutProblem
from estimator.layout.search import LayoutEval, search
from estimator.plan.advice import COMM_WAIT_LIMIT
from estimator.plan.calibration import COMM_KEYS
from estimator.plan.compose import fabric_for, layout_problem
from estimator.plan.peak_step import step_time_at_peak_s

#: The article's section 5.1: communication wait above 30 % of the step points at the network (the
#: plan's advice uses the same rule: estimator.plan.advice.COMM_WAIT_LIMIT).
NETWORK_WAIT_SHARE = COMM_WAIT_LIMIT
#: A measured part this much slower than the model's (ratio) is reported; within it, it matches.
SLOWER_RATIO = 1.25
FASTER_RATIO = 0.8
DATA_LOADING_SHARE = 0.05  # data loading above 5 % of the step is not hidden by the prefetch
BUBBLE_SHARE = 0.10  # the model's bubble above 10 % of the step: more micro-batches pay
MEMORY_PRESSURE = 0.90  # the layout needs more than 90 % of HBM
UNEXPLAINED_SHARE = 0.10  # measured time outside the parts given, beyond the model's bubble
#: The terms a diagnosis compares (keys of `terms`), as a profiler splits a step.
TERMS = ("compute", "communication", "data_loading", "other")


PARTS_OVER_STEP = "compute, communication and data loading add up to more than the step time"
# the measurement's own refusals -> their codes (the contract's range and type codes otherwise)
_MEASUREMENT_CODES = {"extra_forbidden": "not-a-measurement-field", PARTS_OVER_STEP: "parts-exceed-step-time"}


class Measurement(_Section):
    """What the run measured, per step (seconds)."""

    step_time_s: Num = Field(gt=0, le=1e6)
    compute_s: Num | None = Field(None, ge=0, le=1e6)
    communication_s: Num | None = Field(None, ge=0, le=1e6, description="Exposed communication wait")
    data_loading_s: Num | None = Field(None, ge=0, le=1e6)

    @model_validator(mode="after")
    def _parts_within_step(self) -> Measurement:
        parts = sum(v or 0.0 for v in (self.compute_s, self.communication_s, self.data_loading_s))
        if parts > self.step_time_s * 1.001:
            raise ValueError(PARTS_OVER_STEP)
        return self


def _measurement(raw: Any) -> Measurement:
    if raw is None:
        raise ScenarioError(
            "is required: the run's step time (and where known the profiler's parts)", "measured"
        )
    try:
        return Measurement.model_validate(raw)
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            sentence = _sentence(err)  # its code + params too (the contract's, estimator.contract.fields)
            own = _MEASUREMENT_CODES.get(str(err.get("type"))) or _MEASUREMENT_CODES.get(sentence)
            code = (own, {}) if own else _code(err, sentence)
            errors.append(FieldError(f"measured.{loc}" if loc else "measured", sentence, *code))
        raise ScenarioError(errors) from None


def _sentence(err: Any) -> str:
    msg = str(err.get("msg", "is invalid")).removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden":
        return "is not a field of the measurement"
    if err.get("type") == "missing":
        return "is required"
    return msg[0].lower() + msg[1:] if msg else msg


def _check_possible(problem: LayoutProblem, step_time_s: float) -> None:
    """Refuse a measured step (s) at or below the step time with the kernels at peak
    (estimator.plan.peak_step.step_time_at_peak_s), which no run reaches (a unit mistake, ms for
    s); diagnosing it would compare the model with an impossible figure."""
    fastest = step_time_at_peak_s(problem)
    if step_time_s <= fastest:
        message = (
            f"a step of {step_time_s:.4g} s would run the chips above their peak (at peak the batch "
            f"takes {fastest:.4g} s); check the figure and its unit"
        )
        params = {"measured_s": step_time_s, "model_s": fastest}
        raise ScenarioError(FieldError("measured.step_time_s", message, "measured-step-above-peak", params))


def run_document(data: Mapping[str, Any]) -> dict[str, Any]:
    """The run as a scenario: training.tokens does not matter to one step (1e12 when absent)."""
    doc = {k: v for k, v in data.items() if k != "measured"}
    training = doc.get("training")
    doc["training"] = {"tokens": 1e12, **training} if isinstance(training, dict) else training
    if doc["training"] is None:
        doc["training"] = {"tokens": 1e12}
    return doc


def model_parts(ev: LayoutEval) -> dict[str, float]:
    """The model's step split as a profiler splits it (seconds): compute, communication, data loading, other."""
    b = ev.breakdown_s
    return {
        "compute": b["compute"] + b["optimizer"] + b["host_overhead"],
        "communication": sum(b[k] for k in COMM_KEYS),
        "data_loading": 0.0,
        "other": b["bubble"] + b["overlap_slowdown"],
    }


def _measured_parts(m: Measurement) -> dict[str, float | None]:
    parts: dict[str, float | None] = {
        "compute": m.compute_s,
        "communication": m.communication_s,
        "data_loading": m.data_loading_s,
    }
    given = [v for v in parts.values() if v is not None]
    parts["other"] = m.step_time_s - sum(given) if len(given) == 3 else None
    return parts


def _finding(code: str, severity: str, message: str, **params: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, "params": params}


def _communication(m: Measurement, model: dict[str, float]) -> list[dict[str, Any]]:
    """The network (a wait share above NETWORK_WAIT_SHARE) or a slower-than-modelled communication."""
    out: list[dict[str, Any]] = []
    if m.communication_s is not None:
        share = m.communication_s / m.step_time_s
        ratio = m.communication_s / model["communication"] if model["communication"] > 0 else None
        params = {
            "share": share,
            "threshold": NETWORK_WAIT_SHARE,
            "measured_s": m.communication_s,
            "model_s": model["communication"],
            "times_model": ratio,
        }
        if share > NETWORK_WAIT_SHARE:
            out.append(
                _finding(
                    "diagnose.network",
                    "warning",
                    f"Communication wait is {share:.0%} of the step, above {NETWORK_WAIT_SHARE:.0%}: suspect "
                    f"the network first (article section 5.1). The model expects {model['communication']:.3g} s "
                    f"of exposed communication for this layout at the links' rated bandwidth; the run waits "
                    f"{m.communication_s:.3g} s. Test each NIC's bandwidth point to point, check ECMP/rail "
                    "routing, PFC pause frames, NUMA binding of the NICs and the HCCL/NCCL topology settings.",
                    **params,
                )
            )
        elif ratio is not None and ratio > SLOWER_RATIO and share > DATA_LOADING_SHARE:
            out.append(
                _finding(
                    "diagnose.communication-slower",
                    "info",
                    f"Communication wait is {share:.0%} of the step, {ratio:.2f}x the model's "
                    f"{model['communication']:.3g} s, though below the {NETWORK_WAIT_SHARE:.0%} the article "
                    "treats as a network fault.",
                    **params,
                )
            )
    return out


def _data_loading(m: Measurement) -> list[dict[str, Any]]:
    """A loader the prefetch does not hide."""
    out: list[dict[str, Any]] = []
    if m.data_loading_s is not None and m.data_loading_s / m.step_time_s > DATA_LOADING_SHARE:
        out.append(
            _finding(
                "diagnose.data-loading",
                "warning",
                f"Data loading takes {m.data_loading_s / m.step_time_s:.0%} of the step; the model assumes the loader's "
                "prefetch hides it. Tokenise and shuffle offline and prefetch to local NVMe (article section 3.4).",
                share=m.data_loading_s / m.step_time_s,
                measured_s=m.data_loading_s,
            )
        )
    return out


def _compute(m: Measurement, model: dict[str, float]) -> list[dict[str, Any]]:
    """Compute slower or faster than modelled."""
    out: list[dict[str, Any]] = []
    if m.compute_s is not None and model["compute"] > 0:
        ratio = m.compute_s / model["compute"]
        params = {"times_model": ratio, "measured_s": m.compute_s, "model_s": model["compute"]}
        if ratio > SLOWER_RATIO:
            out.append(
                _finding(
                    "diagnose.compute-slower",
                    "warning",
                    f"Compute takes {ratio:.2f}x the model's {model['compute']:.3g} s: check that the operators run "
                    "their high-performance kernels (article section 5.1), the clocks and power caps, and the "
                    "FP8 recipe.",
                    **params,
                )
            )
        elif ratio < FASTER_RATIO:
            out.append(
                _finding(
                    "diagnose.compute-faster",
                    "info",
                    f"Compute takes {ratio:.2f}x the model's {model['compute']:.3g} s: the stack is faster than "
                    "the model assumes; plan with this run as calibration.pilot.",
                    **params,
                )
            )
    return out


def _layout(ev: LayoutEval) -> list[dict[str, Any]]:
    """What the layout itself costs: a large pipeline bubble, HBM near its limit."""
    out: list[dict[str, Any]] = []
    if ev.bubble_fraction > BUBBLE_SHARE:
        out.append(
            _finding(
                "diagnose.bubble",
                "info",
                f"The pipeline bubble is {ev.bubble_fraction:.0%} of the modelled step (PP={ev.pp}, "
                f"{ev.micro_batches} micro-batches): 4 to 8 micro-batches per stage keep it small "
                "(article section 2.3), or interleave stages.",
                share=ev.bubble_fraction,
                pp=ev.pp,
                micro_batches=ev.micro_batches,
            )
        )
    used = ev.per_card_bytes["total"] / ev.hbm_bytes
    if used > MEMORY_PRESSURE:
        out.append(
            _finding(
                "diagnose.memory-pressure",
                "info",
                f"The layout needs {used:.0%} of the cards' HBM: allocator retries and fragmentation slow "
                "steps near the limit; recompute activations or shard more with ZeRO (article section 5.4).",
                share=used,
            )
        )
    return out


def _unexplained(m: Measurement, model: dict[str, float]) -> list[dict[str, Any]]:
    """Step time that no measured part explains."""
    out: list[dict[str, Any]] = []
    other = _measured_parts(m)["other"]
    if other is not None and other - model["other"] > UNEXPLAINED_SHARE * m.step_time_s:
        out.append(
            _finding(
                "diagnose.unexplained",
                "info",
                f"{other:.3g} s of the step is neither compute, communication nor data loading (the model "
                f"expects {model['other']:.3g} s of bubble and overlap): host stalls, stragglers or "
                "synchronisation; read the logs of the slowest rank (article section 7.3).",
                measured_s=other,
                model_s=model["other"],
            )
        )
    return out


def findings(m: Measurement, ev: LayoutEval) -> list[dict[str, Any]]:
    """What differs and what to do about it (codes under `diagnose.`), most severe first."""
    model = model_parts(ev)
    step = m.step_time_s
    out = [
        *_communication(m, model),
        *_data_loading(m),
        *_compute(m, model),
        *_layout(ev),
        *_unexplained(m, model),
    ]
    ratio = step / ev.step_time_s
    if not out:
        out.append(
            _finding(
                "diagnose.matches",
                "info",
                f"The run matches the model within its tolerance (step {ratio:.2f}x the model's "
                f"{ev.step_time_s:.3g} s); nothing stands out.",
                times_model=ratio,
                model_s=ev.step_time_s,
            )
        )
    order = {"warning": 0, "info": 1}
    return sorted(out, key=lambda f: order.get(f["severity"], 2))


def terms(m: Measurement, ev: LayoutEval) -> list[dict[str, Any]]:
    """Term by term: {term, measured_s, model_s, ratio, measured_share, model_share} (None where unmeasured)."""
    model, measured = model_parts(ev), _measured_parts(m)
    rows = []
    for term in TERMS:
        a, b = measured[term], model[term]
        rows.append(
            {
                "term": term,
                "measured_s": a,
                "model_s": b,
                "ratio": a / b if a is not None and b > 0 else None,
                "measured_share": a / m.step_time_s if a is not None else None,
                "model_share": b / ev.step_time_s,
            }
        )
    return rows


def diagnose(data: Any, books: Mapping[str, PriceBook] | None = None) -> dict[str, Any]:
    """Compare a measured run with the model's breakdown of it: {run, model, terms, findings,
    engine_version}. ScenarioError (with the field path) for anything wrong with the input."""
    if not isinstance(data, dict):
        raise not_an_object("the run must be a JSON object")
    measurement = _measurement(data.get("measured"))
    scenario = validate_shape(run_document(data))
    cards = scenario.cluster.cards
    if cards is None:
        raise ScenarioError("a diagnosis needs the run's cluster.cards", "cluster.cards")
    if scenario.calibration is not None:
        raise ScenarioError("a diagnosis takes no calibration; send the run itself", "calibration")
    r = resolve(scenario, books)
    problem = layout_problem(r, cards, fabric_for(r, cards))
    _check_possible(problem, measurement.step_time_s)
    found = search(problem)
    ev = found.best or (found.closest if scenario.parallelism.dp_fixed else None)
    if ev is None:
        raise ScenarioError(
            "no layout of this run fits the cards' memory; give the layout it ran", "parallelism"
        )
    return {
        "run": {
            "model": r.model_name,
            "accelerator": r.accelerator.id,
            "cards": cards,
            "measured": measurement.model_dump(mode="json"),
            "comm_wait_share": (
                measurement.communication_s / measurement.step_time_s
                if measurement.communication_s is not None
                else None
            ),
        },
        "model": {
            "layout": ev.to_dict(),
            "step_time_s": ev.step_time_s,
            "comm_wait_share": model_parts(ev)["communication"] / ev.step_time_s,
            "step_ratio": measurement.step_time_s / ev.step_time_s,
        },
        "terms": terms(measurement, ev),
        "findings": findings(measurement, ev),
        "engine_version": ENGINE_VERSION,
    }
