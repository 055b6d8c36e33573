"""Catalog checks: published parameter counts of the presets, and the seed article's corrected sizing
example."""

from __future__ import annotations

from typing import Any

from estimator import catalog
from estimator.model.compute import training_flop, training_time_s
from estimator.model.transformer import param_counts
from estimator.validation.rows import row

SECONDS_PER_YEAR = 365 * 86400.0


def model_param_rows() -> list[dict[str, Any]]:
    """Total and active parameters of every preset with a published count."""
    rows = []
    for pid, preset in sorted(catalog.presets().items()):
        counts = param_counts(preset.architecture)
        src = preset.sources.get("published_total_params")
        source = src.source if src else "model card"
        if preset.published_total_params:
            rows.append(
                row("model-params", pid, "total params", preset.published_total_params, counts.total, source)
            )
        if preset.published_active_params and preset.architecture.is_moe:
            rows.append(
                row(
                    "model-params",
                    pid,
                    "active params",
                    preset.published_active_params,
                    counts.active,
                    source,
                )
            )
    return rows


def source_article_rows() -> list[dict[str, Any]]:
    """The seed article's section 6 example as corrected by its errata: 70B dense, 5e11 tokens,
    320 TFLOP/s per card at 50% utilization, 30 days -> 2.1e23 FLOP, ~41.6 card-years, ~507 cards."""
    flop = training_flop(6 * 70e9, 5e11)
    card_years = training_time_s(flop, 1, 320e12, 0.5) / SECONDS_PER_YEAR
    cards = flop / (320e12 * 0.5 * 30 * 86400.0)
    src = "seed article section 6, errata in docs/sources.md#source-article-errata"
    return [
        row("source-article", "70B x 5e11 tokens", "training FLOP", 2.1e23, float(flop), src),
        row("source-article", "70B x 5e11 tokens", "card-years at 320 TF, 50%", 41.6, float(card_years), src),
        row("source-article", "70B x 5e11 tokens", "cards for 30 days", 507, float(cards), src),
    ]
