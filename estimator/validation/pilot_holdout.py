"""Held-out check of calibration.pilot (estimator.plan.calibration) on published families: calibrate
on the smallest run of a family (same stack, chip and precision, published by one source) and
predict the family's larger runs; the error with and without calibration, per row. Nothing of the
larger rows enters the fit. The runs are those of reference_data/throughput_runs.toml (sources in
docs/sources.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.validation.published_runs import published_runs, run_scenario
from estimator.validation.rows import row

#: (family, pilot run id, target run ids): each published by one source with one stack and chip.
FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Megatron-Bridge Llama 3 FP8 (H100)",
        "llama3-8b-8xh100-mcore-fp8",
        ("llama3-70b-64xh100-mcore-fp8", "llama3-405b-1024xh100-mcore-fp8"),
    ),
    (
        "NeMo 24.07 Llama 2 FP8 (H100)",
        "nemo-llama-2-7b-8xh100-fp8",
        ("nemo-llama-2-13b-16xh100-fp8", "nemo-llama-2-70b-64xh100-fp8"),
    ),
    ("NeMo 24.07 Llama 3 FP8 (H100)", "nemo-llama-3-8b-8xh100-fp8", ("nemo-llama-3-70b-64xh100-fp8",)),
    (
        "NeMo 24.07 GPT-3 FP8 (H100)",
        "nemo-gpt3-5b-64xh100-fp8",
        ("nemo-gpt3-20b-64xh100-fp8", "nemo-gpt3-175b-128xh100-fp8", "nemo-gpt3-175b-512xh100-fp8"),
    ),
    (
        "llm-foundry MPT BF16 (H100)",
        "mpt-7b-8xh100-2k-bf16",
        ("mpt-13b-8xh100-4k-bf16", "mpt-30b-8xh100-8k-bf16", "mpt-70b-64xh100-2k-bf16"),
    ),
)


def pilot_block(run: Mapping[str, Any], models: Mapping[str, Any]) -> dict[str, Any]:
    """calibration.pilot of a published run: its cards, layout, batch, model and measured tokens/s."""
    scenario = run_scenario(run, models)
    return {
        "cards": run["gpus"],
        "parallelism": scenario["parallelism"],
        "seq_len": run["seq_len"],
        "global_batch_tokens": run["global_batch_seqs"] * run["seq_len"],
        "measured_tokens_per_s_per_card": float(run["tokens_per_s_per_gpu"]),
        "model": dict(models[run["model"]]),
        "stack": run["stack"],
    }


def holdout_table() -> list[dict[str, Any]]:
    """Per target row: family, pilot, target, published, uncalibrated and calibrated tokens/s per
    GPU, both errors (%), the calibration's band (relative half-width) and whether the published
    figure lies in it. A target whose published layout the plan refuses is left out."""
    models, runs = published_runs()
    by_id = {r["id"]: r for r in runs}
    rows = []
    for family, pilot_id, targets in FAMILIES:
        block = pilot_block(by_id[pilot_id], models)
        for target_id in targets:
            run = by_id[target_id]
            scenario = run_scenario(run, models)
            try:
                plain = estimate(scenario)["result"]
                cal = estimate({**scenario, "calibration": {"pilot": block}})["result"]
            except ScenarioError:
                # the plan refuses the published layout (over HBM in the memory model: plan.refusal),
                # so there is no plan to compare; the published-runs suite still times its step
                continue
            cards = run["gpus"]
            published = float(run["tokens_per_s_per_gpu"])
            # the published layout's figures (result.parallelism), as the published-runs suite
            before = float(plain["parallelism"]["tokens_per_s"]) / cards
            after = float(cal["parallelism"]["tokens_per_s"]) / cards
            band = cal["calibration"]["band"]
            rows.append(
                {
                    "family": family,
                    "pilot": pilot_id,
                    "case": target_id,
                    "published": published,
                    "uncalibrated": before,
                    "calibrated": after,
                    "error_uncalibrated_pct": 100.0 * (before - published) / published,
                    "error_calibrated_pct": 100.0 * (after - published) / published,
                    "band_half_width": band["relative_half_width"],
                    "in_band": band["tokens_per_s_low"] <= published * cards <= band["tokens_per_s_high"],
                    "factor": cal["calibration"]["factors"][0]["value"],
                }
            )
    return rows


def pilot_holdout_rows() -> list[dict[str, Any]]:
    """The held-out table as validation-page rows (predicted = calibrated from the family's pilot)."""
    return [
        row(
            "pilot-calibration",
            f"{r['case']} (pilot {r['pilot']})",
            "tokens/s per GPU",
            r["published"],
            round(r["calibrated"], 1),
            f"{r['family']}; uncalibrated {r['uncalibrated']:,.0f} ({r['error_uncalibrated_pct']:+.1f}%)",
        )
        for r in holdout_table()
    ]
