"""Predicted against published figures, for `python -m estimator validate` and the web page.

Each row: {suite, case, metric, published, predicted, error_pct, source}. The suites:
- megatron-2021: Narayanan et al. 2021, Table 1 (executed TFLOP/s per A100, layout fixed).
- zero-2019: Rajbhandari et al. 2019, Figure 1 (model-state GB per device, 7.5B on 64 cards).
- superpod-h100: NVIDIA DGX SuperPOD H100 RA, Table 4 (leaf and spine switches, 1-4 SUs).
- model-params: published total/active parameters of the catalog presets (model cards, papers).
- source-article: the corrected sizing example of the seed article (section 6 and its errata).
- llama3-2024: held out (nothing was calibrated on it): Llama 3 405B pre-training on 8K-16K H100s,
  Dubey et al. 2024, "The Llama 3 Herd of Models", Table 4, layout fixed as published.
- moe, fp8, long-context, ascend: published runs with their exact layouts and software versions
  (Megatron-Core/Megatron-Bridge, NeMo, torchao/torchtitan, llm-foundry, DeepSeek-V3, MindSpeed-LLM),
  tokens/s per GPU; nothing was calibrated on them (reference_data/throughput_runs.toml).
- reliability: Llama 3 405B's interruptions (Table 5) and effective training time, Kokolis et al.
  2024's mean time to failure at 16,384 GPUs (estimator/validation/reliability.py).

One module per suite: megatron, zero, superpod, catalog_rows, llama3, published_runs; rows holds the
row shape and the reference-data reader.
"""

from __future__ import annotations

from typing import Any

from estimator.validation.catalog_rows import model_param_rows, source_article_rows
from estimator.validation.llama3 import llama3_rows
from estimator.validation.megatron import megatron_rows
from estimator.validation.published_runs import published_run_rows
from estimator.validation.reliability import reliability_rows
from estimator.validation.rows import normalize
from estimator.validation.superpod import superpod_validation_rows
from estimator.validation.zero import zero_rows

__all__ = ["validation_rows"]


def validation_rows() -> list[dict[str, Any]]:
    """Every suite, in a stable order."""
    rows: list[dict[str, Any]] = []
    rows += normalize(megatron_rows(), "megatron-2021", "Narayanan et al. 2021, Table 1")
    rows += normalize(zero_rows(), "zero-2019", "Rajbhandari et al. 2019, Figure 1")
    rows += normalize(superpod_validation_rows(), "superpod-h100", "NVIDIA DGX SuperPOD H100 RA, Table 4")
    rows += model_param_rows()
    rows += source_article_rows()
    rows += llama3_rows()
    rows += published_run_rows()
    rows += reliability_rows()
    return rows
