"""Published MoE, FP8, long-context and Ascend runs with their exact layouts and software versions
(reference_data/throughput_runs.toml): predicted against published tokens/s per GPU. Nothing was
calibrated on them."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import Any

from estimator.contract.resolve import Resolved, resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.search import LayoutEval, search
from estimator.plan.compose import fabric_for, layout_problem
from estimator.validation.rows import REFERENCE_DIR, row


def published_runs() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(models, runs) of reference_data/throughput_runs.toml: MoE, FP8 and long-context runs."""
    with (REFERENCE_DIR / "throughput_runs.toml").open("rb") as fh:
        data = tomllib.load(fh)
    return data["models"], data["runs"]


def run_scenario(run: Mapping[str, Any], models: Mapping[str, Any], **training: object) -> dict[str, Any]:
    """The scenario of one published run (its layout fixed as published); `training` overrides."""
    layout = dict(run["layout"])
    model_parallel = layout["tp"] * layout["pp"] * layout["cp"]
    layout["dp"] = run["gpus"] // model_parallel
    train = {
        "tokens": 1e12,
        "seq_len": run["seq_len"],
        "global_batch_tokens": run["global_batch_seqs"] * run["seq_len"],
        "precision": run["precision"],
        "stack": run["stack"],
        "stack_overrides": dict(run.get("stack_overrides", {})),
        "moe_imbalance": run["moe_imbalance"],
    }
    if "grad_dtype" in run:
        train["grad_dtype"] = run["grad_dtype"]
    train.update(training)
    return {
        "name": run["id"],
        "model": dict(models[run["model"]]),
        "training": train,
        "hardware": {
            "accelerator": run.get("accelerator", "h100-sxm"),
            "server": run.get("server", "dgx-h100"),
        },
        "cluster": {"cards": run["gpus"]},
        "parallelism": layout,
    }


def published_layout(r: Resolved) -> LayoutEval:
    """The scenario's fixed (published) layout, timed: the layout ran, so it is evaluated even where
    the memory model finds it over HBM (a plan would refuse it, plan.refusal; validation compares
    the step time). ScenarioError when no layout passes the rules."""
    cards = int(r.scenario.cluster.cards or 0)
    found = search(layout_problem(r, cards, fabric_for(r, cards)))
    shown = found.best or found.closest
    if shown is None:
        raise ScenarioError("no layout passes the rules", "parallelism")
    return shown


def predicted_tokens_per_s_per_gpu(scenario: dict[str, Any]) -> float:
    """Predicted training tokens/s per card of a scenario with a fixed layout, as published
    (published_layout); nan when no layout passes the rules."""
    r = resolve(validate_shape(scenario))
    try:
        shown = published_layout(r)
    except ScenarioError:
        return float("nan")
    return float(shown.tokens_per_s) / int(r.scenario.cluster.cards or 1)


def throughput_rows() -> list[dict[str, Any]]:
    """Rows {case, suite, published, predicted, error_pct, source, software} for the published runs."""
    models, runs = published_runs()
    rows = []
    for run in runs:
        predicted = predicted_tokens_per_s_per_gpu(run_scenario(run, models))
        published = float(run["tokens_per_s_per_gpu"])
        rows.append(
            {
                "case": run["id"],
                "suite": run["suite"],
                "published": published,
                "predicted": round(predicted, 1),
                "error_pct": round(100.0 * (predicted - published) / published, 1),
                "source": run["source"],
                "software": run["software"],
            }
        )
    return rows


def published_run_rows() -> list[dict[str, Any]]:
    """MoE, FP8, long-context and Ascend runs with their published layouts and software versions
    (reference_data/throughput_runs.toml): predicted against published tokens/s per GPU."""
    return [
        row(
            r["suite"],
            r["case"],
            "tokens/s per GPU",
            r["published"],
            r["predicted"],
            f"{r['source']}; {r['software']}",
        )
        for r in throughput_rows()
    ]
