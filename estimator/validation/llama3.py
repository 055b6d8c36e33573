"""Held out (nothing was calibrated on it): Llama 3 405B pre-training on 8K-16K H100s, Dubey et al. 2024,
"The Llama 3 Herd of Models", Table 4, layout fixed as published."""

from __future__ import annotations

from typing import Any

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.validation.rows import row

# Dubey et al. 2024, Table 4: GPUs, TP, CP, PP, DP, sequence length, TFLOP/s per GPU (BF16 model FLOPs).
# The third row prints DP 4, but TP8·CP16·PP16·4 = 8,192 GPUs, not 16,384; the row's own batch columns
# (16M tokens per batch / 131,072 tokens per sequence / 16 sequences per DP rank) give DP = 8, used here.
LLAMA3_TABLE4 = (
    (8192, 8, 1, 16, 64, 8192, 430.0),
    (16384, 8, 1, 16, 128, 8192, 400.0),
    (16384, 8, 16, 16, 8, 131072, 380.0),
)


def llama3_rows() -> list[dict[str, Any]]:
    """Predicted model TFLOP/s per GPU (predicted MFU x H100 peak) for Llama 3 405B, 16M-token batches."""
    rows = []
    for gpus, tp, cp, pp, dp, seq, published in LLAMA3_TABLE4:
        try:
            out = estimate(
                {
                    "name": f"Llama 3 405B, {gpus} H100",
                    "model": {"preset": "llama-3.1-405b"},
                    "training": {
                        "tokens": 15.6e12,
                        "seq_len": seq,
                        "global_batch_tokens": 16 * 1024 * 1024,
                        "stack": "megatron-core-2024",  # trained in 2024: FlashAttention-2-class kernels
                    },
                    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
                    "cluster": {"cards": gpus},
                    "parallelism": {"tp": tp, "cp": cp, "pp": pp, "dp": dp},
                    "network": {"switch_ports": 64, "port_gbps": 400},
                }
            )
        except ScenarioError:  # the published layout refused (plan.refusal): no prediction
            predicted = 0.0
        else:
            p = out["result"]["parallelism"]
            predicted = p["predicted_mfu"] * out["result"]["compute"]["peak_flops_per_card"] / 1e12
        rows.append(
            row(
                "llama3-2024",
                f"{gpus} GPUs TP{tp} CP{cp} PP{pp} DP{dp} seq {seq}",
                "model TFLOP/s per GPU",
                published,
                predicted,
                "Dubey et al. 2024 (Llama 3), Table 4",
            )
        )
    return rows
