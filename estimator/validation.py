"""Validation of the layout model against published measurements.

- `megatron_rows()`: Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU
  Clusters Using Megatron-LM", table 1): GPT models from 1.7B to 1T parameters on 32 to 3,072
  A100-80GB in DGX A100 nodes (8 GPUs on NVSwitch, NVLink3 300 GB/s per direction; 8 x 200 Gb/s
  HDR InfiniBand per node, i.e. 25 GB/s per GPU; Selene's non-blocking fat tree).
  For every row the published tp, pp and dp = gpus / (tp·pp) are fixed, with the paper's setup:
  seq 2048, vocab 51200, GeLU MLP of 4h, tied embeddings, full activation recompute, no sequence
  parallelism and no flash attention (both came later), fp16 gradients all-reduced in 16 bit
  (grad_dtype "bf16", 2 bytes), no gradient-reduce overlap (Megatron-LM 2021 reduced after the
  backward pass). The micro-batch size and the number of interleaved chunks are not in the table:
  the search picks them (the paper tuned them per row); the chunks may be any divisor of the layers
  per stage (Megatron-LM allows it; the product's free search offers 1, 2, 4, 8). Predicted executed TFLOP/s per GPU =
  96·B·s·l·h²·(1 + s/6h + V/16lh) / step_time / gpus (the paper's formula, hardware FLOPs).
- `zero_rows()`: Rajbhandari et al. 2019 ("ZeRO", figure 1): model-state memory of a 7.5B model on
  64 data-parallel cards with 16-bit gradients (K = 12), by ZeRO stage.

Calibrated physical parameter (one value for every row, never per row):
estimator.steptime.TRAINING_GEMM_FRACTION, the part of the catalog's best-case GEMM efficiency
(A100: 0.85, MAMF) that a training step's GEMMs achieve; `calibrate_gemm_fraction()` reproduces the
fit. Everything else comes from the catalog / data sheets (peak 312 TF, HBM 2.039 TB/s, NVLink
300 GB/s, HDR 25 GB/s per GPU) and the a-priori constants LINK_EFFICIENCY and HBM_EFFICIENCY.
"""

from __future__ import annotations

import csv
from pathlib import Path

from estimator import catalog
from estimator.layout import LayoutProblem, search
from estimator.memory import model_state_bytes
from estimator.models import Architecture, param_counts
from estimator.stacks import STACKS

REFERENCE_DIR = Path(__file__).resolve().parent / "reference_data"
MEGATRON_SEQ = 2048
MEGATRON_VOCAB = 51200
HDR_BYTES_PER_S = 200e9 / 8  # one 200 Gb/s HDR InfiniBand port per GPU


def _read_csv(name: str) -> list[dict[str, str]]:
    with (REFERENCE_DIR / name).open(newline="") as fh:
        lines = [line for line in fh if not line.startswith("#")]
    return list(csv.DictReader(lines))


def megatron_architecture(hidden: int, heads: int, layers: int) -> Architecture:
    return Architecture(
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        head_dim=hidden // heads,
        intermediate_size=4 * hidden,
        vocab_size=MEGATRON_VOCAB,
        tie_word_embeddings=True,
        hidden_act="gelu",
        max_position_embeddings=MEGATRON_SEQ,
    )


def megatron_hardware_flop_per_step(batch_seqs, layers, hidden, seq=MEGATRON_SEQ, vocab=MEGATRON_VOCAB):
    """96·B·s·l·h²·(1 + s/6h + V/16lh): FLOPs of one step with full recompute (Narayanan 2021, eq. 3)."""
    return (
        96.0
        * batch_seqs
        * seq
        * layers
        * hidden**2
        * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden))
    )


def megatron_problem(
    row: dict,
    gemm_fraction: float | None = None,
    virtual_stages: int | None = None,
    link_efficiency: float | None = None,
) -> LayoutProblem:
    """The LayoutProblem of one row of the Megatron table."""
    arch = megatron_architecture(int(row["hidden"]), int(row["heads"]), int(row["layers"]))
    a100 = catalog.accelerator("a100-sxm-80gb")
    fixed = {
        "tp": int(row["tp"]),
        "pp": int(row["pp"]),
        "ep": 1,
        "cp": 1,
        "zero_stage": 0,
        "recompute": "full",
        "sequence_parallel": False,
        "top_n": 0,
    }
    if virtual_stages is not None:
        fixed["virtual_stages"] = virtual_stages
    extra = {}
    if link_efficiency is not None:
        extra["link_efficiency"] = link_efficiency
    if gemm_fraction is not None:
        extra["gemm_fraction"] = gemm_fraction
    return LayoutProblem(
        arch=arch,
        counts=param_counts(arch),
        seq_len=MEGATRON_SEQ,
        global_batch_tokens=int(row["global_batch_seqs"]) * MEGATRON_SEQ,
        cards=int(row["gpus"]),
        accelerator=a100,
        precision="bf16",
        cards_per_node=8,
        scaleup_domain_cards=8,
        nic_bytes_per_s_per_card=HDR_BYTES_PER_S,
        grad_dtype="bf16",
        stack=STACKS["megatron-lm-2021"],
        fixed=fixed,
        **extra,
    )


def megatron_prediction(row: dict, gemm_fraction: float | None = None, link_efficiency: float | None = None):
    """(predicted TFLOP/s per GPU, best LayoutEval) for one row; search over mbs and interleaving."""
    layers_per_stage = int(row["layers"]) // int(row["pp"])
    best = None
    for v in range(1, layers_per_stage + 1):
        if layers_per_stage % v or (v > 1 and int(row["pp"]) == 1):
            continue
        result = search(megatron_problem(row, gemm_fraction, v, link_efficiency))
        if result.best and (best is None or result.best.step_time_s < best.step_time_s):
            best = result.best
    if best is None:
        return float("nan"), None
    flop = megatron_hardware_flop_per_step(
        int(row["global_batch_seqs"]), int(row["layers"]), int(row["hidden"])
    )
    return flop / best.step_time_s / int(row["gpus"]) / 1e12, best


def megatron_rows(gemm_fraction: float | None = None, link_efficiency: float | None = None) -> list[dict]:
    """Rows {case, published, predicted, error_pct, layout} for Narayanan 2021 table 1 (TFLOP/s per GPU)."""
    out = []
    for row in _read_csv("megatron2021_weak_scaling.csv"):
        predicted, best = megatron_prediction(row, gemm_fraction, link_efficiency)
        published = float(row["tflops_per_gpu"])
        out.append(
            {
                "case": f"{row['params_b']}B tp{row['tp']} pp{row['pp']} {row['gpus']} GPUs",
                "published": published,
                "predicted": round(predicted, 1),
                "error_pct": round(100.0 * (predicted - published) / published, 1),
                "layout": None
                if best is None
                else {
                    "micro_batch_size": best.micro_batch_size,
                    "virtual_stages": best.virtual_stages,
                    "bubble_fraction": round(best.bubble_fraction, 3),
                },
            }
        )
    return out


def zero_rows() -> list[dict]:
    """Rows {case, published, predicted, error_pct}: ZeRO figure 1 (GB per device), 7.5B on 64 cards."""
    psi, nd = 7.5e9, 64
    out = []
    for row in _read_csv("zero_memory.csv"):
        stage = int(row["zero_stage"])
        w, g, o = model_state_bytes(psi, nd, stage, grad_dtype="bf16")
        predicted = float(w + g + o) / 1e9
        published = float(row["per_device_gb"])
        out.append(
            {
                "case": f"ZeRO stage {stage}",
                "published": published,
                "predicted": round(predicted, 1),
                "error_pct": round(100.0 * (round(predicted, 1) - published) / published, 2),
            }
        )
    return out


def calibrate_gemm_fraction(grid=None) -> tuple[float, float]:
    """(fraction, mean |error| %) minimising the mean absolute error of megatron_rows over `grid`."""
    grid = grid if grid is not None else [round(0.60 + 0.01 * i, 2) for i in range(31)]
    best = None
    for x in grid:
        rows = megatron_rows(gemm_fraction=x)
        mae = sum(abs(r["error_pct"]) for r in rows) / len(rows)
        if best is None or mae < best[1]:
            best = (x, mae)
    return best


# --------------------------------------------------------------------------- published runs
def published_runs() -> tuple[dict, list[dict]]:
    """(models, runs) of reference_data/throughput_runs.toml: MoE, FP8 and long-context runs."""
    import tomllib

    with (REFERENCE_DIR / "throughput_runs.toml").open("rb") as fh:
        data = tomllib.load(fh)
    return data["models"], data["runs"]


def run_scenario(run: dict, models: dict, **training: object) -> dict:
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


def predicted_tokens_per_s_per_gpu(scenario: dict) -> float:
    """Predicted training tokens/s per card of a scenario with a fixed layout (nan if it does not fit)."""
    from .plan import estimate

    out = estimate(scenario)
    p = out["result"]["parallelism"]
    if not p:
        return float("nan")
    return float(p["tokens_per_s"]) / int(out["result"]["compute"]["cards"])


def throughput_rows() -> list[dict]:
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
