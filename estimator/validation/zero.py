"""ZeRO paper check: Rajbhandari et al. 2019 ("ZeRO", figure 1), model-state memory of a 7.5B model on
64 data-parallel cards with 16-bit gradients (K = 12), by ZeRO stage."""

from __future__ import annotations

from typing import Any

from estimator.layout.memory import model_state_bytes
from estimator.validation.rows import read_csv


def zero_rows() -> list[dict[str, Any]]:
    """Rows {case, published, predicted, error_pct}: ZeRO figure 1 (GB per device), 7.5B on 64 cards."""
    psi, nd = 7.5e9, 64
    out = []
    for row in read_csv("zero_memory.csv"):
        stage = int(row["zero_stage"])
        w, g, o = model_state_bytes(psi, nd, stage, grad_dtype="bf16")
        predicted = float(w + g + o) / 1e9
        published = float(row["per_device_gb"])
        out.append(
            {
                "case": f"ZeRO stage {stage}",
                "metric": "model-state GB per card",
                "published": published,
                "predicted": round(predicted, 1),
                "error_pct": round(100.0 * (round(predicted, 1) - published) / published, 2),
            }
        )
    return out
