"""result.assumptions: the inputs behind the numbers, each with `code` (what it is, rendered in the
reader's language with `params`), value, unit and source; `source_code` where the source is generic
rather than a title. Prices are converted to the report's currency (cost.currency)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from estimator import catalog
from estimator.contract.book_pricing import assumption as price_book_assumption
from estimator.contract.book_pricing import electricity_usd, source_text
from estimator.contract.resolve import Resolved
from estimator.contract.run import Training
from estimator.layout.stack_profile import StackProfile
from estimator.money.pricing import causal_share, model_flops
from estimator.money.rollup import Equipment
from estimator.plan.chosen import ClusterChoice
from estimator.plan.mfu_range import ASSUMED_MFU_SPREAD
from estimator.plan.result import Assumption

GENERIC = "catalog defaults / scenario"
MOE_IMBALANCE_DEFAULT_SOURCE = (
    "default: auxiliary-loss-free balancing in production (training.moe_imbalance; 1.0 for "
    "force-balanced benchmarks) [U]"
)
MFU_SPREAD_SOURCE = (
    "assumption, not evidence: +-25 % around a given MFU without efficiency.mfu_range "
    "(plan.mfu_range.ASSUMED_MFU_SPREAD) [U]"
)
SEQ_LEN_DEFAULT_SOURCE = (
    "default: 4,096 tokens, or the assumed shape's for a model given by its size (training.seq_len) [U]"
)
GLOBAL_BATCH_DEFAULT_SOURCE = (
    "default: 4M tokens a step, Llama 2's (Touvron et al. 2023, section 2.2; "
    "training.global_batch_tokens) [U]"
)

# generic sources -> their code (a title is shown as it is; these are rendered in the reader's language)
SOURCE_CODES = {
    "scenario input": "scenario",
    GENERIC: "catalog-or-scenario",
    "scenario efficiency.mfu": "mfu-given",
    "layout model prediction": "mfu-predicted",
    MOE_IMBALANCE_DEFAULT_SOURCE: "moe-imbalance-default",
    GLOBAL_BATCH_DEFAULT_SOURCE: "global-batch-default",
    MFU_SPREAD_SOURCE: "mfu-spread-assumed",
    SEQ_LEN_DEFAULT_SOURCE: "seq-len-default",
    "scenario cost.server_price": "scenario",
}

MFU_SOURCES = {"given": "scenario efficiency.mfu", "predicted": "layout model prediction"}


@dataclass(frozen=True, slots=True)
class _Row:
    """An assumption before its code and params: (code suffix, name, value, unit, source)."""

    code: str
    name: str
    value: float | str
    unit: str
    source: str
    detail: Mapping[str, Any] | None = None
    params: Mapping[str, Any] | None = None  # the row's own, besides the accelerator and precision


def assumptions(
    r: Resolved, choice: ClusterChoice, eq: Equipment, pr: Mapping[str, float], stack: StackProfile
) -> list[Assumption]:
    """Every assumption row of the plan: hardware, stack, prices and the price book."""
    rows = _hardware_rows(r, choice, stack) + _price_rows(r, eq, pr)
    params = {"accelerator": r.accelerator.name, "precision": r.scenario.training.precision}
    out = [
        Assumption(
            name=row.name,
            value=row.value,
            unit=row.unit,
            source=row.source,
            detail=row.detail,
            code=f"assumption.{row.code}",
            params={**params, **(row.params or {})},
            source_code=f"source.{SOURCE_CODES[row.source]}" if row.source in SOURCE_CODES else None,
        )
        for row in rows
    ]
    if r.price_book is not None:
        out.append(Assumption(**price_book_assumption(r.price_book)))
    return out


def _source(r: Resolved, field: str) -> str:
    """The catalog's source of an accelerator field, with its date, else the scenario."""
    s = r.accelerator.sources.get(field)
    return f"{s.source} ({s.as_of})" if s else "scenario input"


def _hardware_rows(r: Resolved, choice: ClusterChoice, stack: StackProfile) -> list[_Row]:
    """Peak (FLOP/s), HBM (B), matmul efficiency, MFU, the software stack, the card's TDP (W) and a
    MoE model's load imbalance."""
    acc, precision = r.accelerator, r.scenario.training.precision
    chosen = r.scenario.training.stack
    return [
        _Row("peak", f"{acc.name} dense {precision} peak", acc.peak_flops(precision), "FLOP/s",
             _source(r, "peak_flops_bf16")),
        _Row("hbm", "HBM per card", acc.hbm_bytes, "B", _source(r, "hbm_bytes")),
        _Row("matmul-efficiency", "achievable matmul efficiency", acc.matmul_efficiency, "",
             _source(r, "matmul_efficiency")),
        _Row("mfu", "MFU", choice.mfu, "", MFU_SOURCES[choice.mfu_source]),
        *_mfu_spread_rows(r, choice),
        _flop_row(r, choice.mfu),
        # the software stack the step time assumes (its id as the value, its mechanisms in `detail`)
        _Row("stack" if chosen else "stack-default",
             "software stack" + ("" if chosen else " (default for this accelerator)"), stack.id, "",
             f"{stack.name}; {stack.source} ({stack.as_of}); release: {stack.release}", stack.mechanisms()),
        _Row("tdp", "card TDP", acc.tdp_w, "W", _source(r, "tdp_w")),
        *_moe_rows(r),
        _seq_row(r),
        _batch_row(r),
    ]  # fmt: skip


def _mfu_spread_rows(r: Resolved, choice: ClusterChoice) -> list[_Row]:
    """A given MFU without efficiency.mfu_range: the relative half-width of the triangle the Monte
    Carlo, the chance of missing a deadline and the sizing for a chance of meeting it draw from
    (plan.mfu_range.given_triangle, dimensionless). It moves them (Llama 3.1 70B, 2T tokens, MFU 0.4
    on H100 for 30 days at 90 %: 1,168 cards, 1,016 with the range 0.4-0.4) and is no evidence."""
    if choice.mfu_source != "given" or r.scenario.efficiency.mfu_range is not None:
        return []
    name = "MFU range assumed around the given MFU (relative half-width)"
    return [_Row("mfu-spread", name, ASSUMED_MFU_SPREAD, "", MFU_SPREAD_SOURCE)]


def _moe_rows(r: Resolved) -> list[_Row]:
    """A MoE model's load imbalance (max/mean routed tokens per expert-parallel rank, dimensionless):
    the step time's expert GEMMs and all-to-all and the busiest rank's routed activations scale
    with it (docs/steptime.md), and its default moves the days by about 5 % per 0.1. No row for a
    dense model."""
    if not r.arch.is_moe:
        return []
    value = float(r.scenario.training.moe_imbalance)
    default = Training.model_fields["moe_imbalance"].default
    source = MOE_IMBALANCE_DEFAULT_SOURCE if value == default else "scenario input"
    name = "MoE load imbalance (max/mean routed tokens per expert-parallel rank)"
    return [_Row("moe-imbalance", name, value, "", source)]


def _seq_row(r: Resolved) -> _Row:
    """The sequence length the plan trains at (tokens a sample): the scenario's, else its preset's
    pre-training length (with the catalog's source), else a default. It sets the attention FLOPs per
    token the MFU counts (12·L·s·d_attn: Llama 3.1 70B at its preset's 8,192, 64.4 GFLOP against
    6·N's 424) and the activations' memory, so a default that moves every plan is shown."""
    source = "scenario input"
    if not r.scenario.training.seq_len:
        preset = catalog.presets().get(r.scenario.model.preset or "")
        cited = preset.sources.get("default_seq_len") if preset is not None else None
        source = f"{cited.source} ({cited.as_of})" if cited else SEQ_LEN_DEFAULT_SOURCE
    return _Row("seq-len", "sequence length (tokens a sample)", float(r.seq_len), "tokens", source)


def _batch_row(r: Resolved) -> _Row:
    """The global batch asked (tokens per optimizer step; the layout rounds it to its DP size,
    warning global-batch-rounded): it sets the DP size and micro-batches the layouts may take, so
    its default moves long-context and MoE plans (DeepSeek-V3 at 32K on 2,048 Ascend 910B2: 34.5
    days at the default 4M tokens, 29.4 at 16M)."""
    value = float(r.scenario.training.global_batch_tokens)
    default = float(Training.model_fields["global_batch_tokens"].default)
    source = GLOBAL_BATCH_DEFAULT_SOURCE if value == default else "scenario input"
    return _Row("global-batch", "global batch (tokens a step, asked)", value, "tokens", source)


FLOP_SOURCE = "Kaplan et al. 2020 (6·N_active); Chowdhery et al. 2022, PaLM, appendix B (12·L·s·d_attn)"


def _flop_row(r: Resolved, mfu: float) -> _Row:
    """The FLOPs per token the MFU counts (money.pricing.model_flops: the scenario's convention) and,
    where PaLM's whole attention matrix is counted, the MFU on the FLOPs causal kernels run: the
    dense 6·N_active and half the attention term (a causal layer's keys are half the matrix's, a
    sliding window's too: money.pricing.causal_share), `causal_mfu` = MFU · (6·N + A/2) / (6·N + A).
    At 128K tokens that is about two thirds of the MFU shown."""
    flops = model_flops(r)
    dense, attention = flops["flop_per_token_6n"], flops["flop_per_token_attention"]
    detail = {"dense": dense, "attention": attention}
    if attention <= 0.0:  # training.attention_flops false: 6·N alone
        return _Row(
            "flop-count-6n",
            "FLOPs per token behind the MFU: 6·N_active, attention not counted",
            flops["flop_per_token"],
            "FLOP",
            FLOP_SOURCE,
            detail,
        )
    causal = mfu * causal_share(dense, attention)
    name = (
        "FLOPs per token behind the MFU: 6·N_active + 12·L·s·d_attn, the whole attention matrix; "
        f"counting the causal half the kernels compute, the MFU is {causal:.0%}"
    )
    detail = {**detail, "causal_mfu": causal}
    return _Row(
        "flop-count", name, flops["flop_per_token"], "FLOP", FLOP_SOURCE, detail, {"causal_mfu": causal}
    )


def _price_rows(r: Resolved, eq: Equipment, pr: Mapping[str, float]) -> list[_Row]:
    """Unit prices in the report's currency, electricity per kWh, PUE, depreciation (years), the
    fleet utilization that spreads the owned fixed costs (money.cost) and, in CNY, the exchange
    rate every figure was converted at (CNY per USD)."""
    c, cur, fx = r.scenario.cost, r.scenario.cost.currency, r.usd_to_currency
    return [
        _Row("server-price", "server price (cards included)", eq.server_price_usd * fx, cur,
             eq.sources["server"]),
        _Row("switch-price", "switch price", eq.switch_price_usd * fx, cur, eq.sources["switch"]),
        _Row("transceiver-price", "transceiver price", eq.transceiver_price_usd * fx, cur,
             eq.sources["transceiver"]),
        _Row("cloud-price", "cloud price per card-hour", pr["cloud_usd_per_card_hour"] * fx, cur,
             _source(r, "cloud_price_usd_per_card_hour")),
        _Row("electricity", "electricity", pr["electricity_usd_per_kwh"] * fx, f"{cur}/kWh",
             _electricity_source(r)),
        _Row("pue", "PUE", pr["pue"], "", _default_source("pue", c.pue)),
        _Row("depreciation", "depreciation", pr["depreciation_years"], "years",
             _default_source("depreciation_years", c.depreciation_years)),
        _Row("utilization", "fleet utilization (owned hours doing paid work)", pr["utilization"], "",
             _default_source("utilization", c.utilization)),
        *([_Row("exchange-rate", "exchange rate", fx, "CNY/USD", _default_source("usd_to_cny", c.usd_to_cny))]
          if cur == "CNY" else []),
    ]  # fmt: skip


def _default_source(key: str, given: object) -> str:
    """The source of a running-cost figure: "scenario input" when the scenario gave it, else the
    catalog default's source with its date (catalog/defaults.toml)."""
    if given is not None:
        return "scenario input"
    s = catalog.default_sources().get(key)
    return f"{s.source} ({s.as_of})" if s else GENERIC


def _electricity_source(r: Resolved) -> str:
    """The price book when it set the electricity price (the scenario did not), else the generic source."""
    book = r.price_book
    if r.scenario.cost.electricity_per_kwh is None and electricity_usd(book, r.book_usd_to_cny) is not None:
        assert book is not None
        return source_text(book)
    return _default_source("electricity_usd_per_kwh", r.scenario.cost.electricity_per_kwh)
