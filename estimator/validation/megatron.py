"""The layout model against Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU
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
  This is the one calibration set of the step-time model.

Calibrated physical parameter (one value for every row, never per row):
estimator.layout.steptime.TRAINING_GEMM_FRACTION, the part of the catalog's best-case GEMM efficiency
(A100: 0.85, MAMF) that a training step's GEMMs achieve; `calibrate_gemm_fraction()` reproduces the
fit. Everything else comes from the catalog / data sheets (peak 312 TF, HBM 2.039 TB/s, NVLink
300 GB/s, HDR 25 GB/s per GPU) and the a-priori constants LINK_EFFICIENCY and HBM_EFFICIENCY.
"""

from __future__ import annotations

from typing import Any

from estimator import catalog
from estimator.layout.search import LayoutEval, LayoutProblem, search
from estimator.layout.stacks import STACKS
from estimator.layout.steptime import LINK_EFFICIENCY, TRAINING_GEMM_FRACTION
from estimator.model.transformer import Architecture, param_counts
from estimator.validation.rows import read_csv

MEGATRON_SEQ = 2048
MEGATRON_VOCAB = 51200
HDR_BYTES_PER_S = 200e9 / 8  # one 200 Gb/s HDR InfiniBand port per GPU


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


def megatron_hardware_flop_per_step(
    batch_seqs: int, layers: int, hidden: int, seq: int = MEGATRON_SEQ, vocab: int = MEGATRON_VOCAB
) -> float:
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
    row: dict[str, str],
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
        link_efficiency=LINK_EFFICIENCY if link_efficiency is None else link_efficiency,
        gemm_fraction=TRAINING_GEMM_FRACTION if gemm_fraction is None else gemm_fraction,
    )


def megatron_prediction(
    row: dict[str, str], gemm_fraction: float | None = None, link_efficiency: float | None = None
) -> tuple[float, LayoutEval | None]:
    """(predicted TFLOP/s per GPU, best LayoutEval) for one row; search over mbs and interleaving."""
    layers_per_stage = int(row["layers"]) // int(row["pp"])
    best: LayoutEval | None = None
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


def megatron_rows(
    gemm_fraction: float | None = None, link_efficiency: float | None = None
) -> list[dict[str, Any]]:
    """Rows {case, published, predicted, error_pct, layout} for Narayanan 2021 table 1 (TFLOP/s per GPU)."""
    out = []
    for row in read_csv("megatron2021_weak_scaling.csv"):
        predicted, best = megatron_prediction(row, gemm_fraction, link_efficiency)
        published = float(row["tflops_per_gpu"])
        out.append(
            {
                "case": f"{row['params_b']}B tp{row['tp']} pp{row['pp']} {row['gpus']} GPUs",
                "metric": "hardware TFLOP/s per GPU",  # Table 1 counts recomputation too
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


def calibrate_gemm_fraction(grid: list[float] | None = None) -> tuple[float, float]:
    """(fraction, mean |error| %) minimising the mean absolute error of megatron_rows over `grid`."""
    grid = grid if grid is not None else [round(0.60 + 0.01 * i, 2) for i in range(31)]
    fits = []
    for x in grid:
        rows = megatron_rows(gemm_fraction=x)
        fits.append((x, sum(abs(r["error_pct"]) for r in rows) / len(rows)))
    return min(fits, key=lambda fit: fit[1])
