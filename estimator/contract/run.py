"""The scenario's run sections (docs/architecture.md#scenario-contract): training, efficiency,
cost, serving, reliability, uncertainty and the calibration pilot. Units as in the names: tokens
are counts, seconds are seconds, prices in `cost.currency` per the unit in the name.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, WithJsonSchema, model_validator

from estimator import limits
from estimator.contract.fields import PRICE_BOOK_REFERENCE, Int, Num, _book_reference, _Section
from estimator.contract.machine import Hardware, Parallelism
from estimator.contract.model_spec import ModelSpec

# A stack override's value: checked by the stack itself (estimator.layout.stacks.resolve_stack, one
# sentence per mechanism at training.stack_overrides.<mechanism>), not by a pydantic union whose
# members would each report a fault under a path of their own (".bool", ".int", ".list[str].0").
StackValue = Annotated[
    Any,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "boolean"},
                {"type": "integer"},
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}},
                {"type": "null"},
            ]
        }
    ),
]


class Training(_Section):
    tokens: Num = Field(ge=limits.MIN_TOKENS, le=1e17, description="Training tokens D (at least one)")
    seq_len: Int | None = Field(None, ge=16, le=10_000_000, description="Default: the preset's, else 4096")
    global_batch_tokens: Num = Field(4_194_304, gt=0, le=1e10)
    precision: Literal["bf16", "fp16", "fp8", "fp32"] = "bf16"
    grad_dtype: Literal["fp32", "bf16"] = Field(
        "fp32",
        description="fp32: Megatron's main gradients (18 B/param, 6+12/dp with the distributed optimizer); "
        "bf16: DeepSpeed ZeRO paper's 16 B/param.",
    )
    attention_flops: bool = Field(True, description="Add PaLM's 12·L·s·d_attn FLOPs per token")
    flash_attention: bool | None = Field(
        None, description="Override the stack's attention kernel: false = unfused (scores stored)"
    )
    stack: str | None = Field(
        None,
        max_length=60,
        description="Software stack profile (estimator.layout.stacks): megatron-core-2025, megatron-lm-2021, "
        "megatron-deepspeed, pytorch-fsdp2, llm-foundry, mindspeed-2025, deepseek-dualpipe. Default: mindspeed-2025 "
        "on Ascend, megatron-core-2025 elsewhere.",
    )
    stack_overrides: dict[str, StackValue] = Field(
        default_factory=dict,
        description='Single mechanisms of the stack, e.g. {"ep_comm_overlap": true, "cuda_graphs": true}',
    )
    moe_imbalance: Num = Field(
        1.1,
        ge=1,
        le=64,
        description="MoE load imbalance: max/mean routed tokens per expert-parallel rank (1.0 = "
        "force-balanced benchmarks; default 1.1, auxiliary-loss-free balancing in production)",
    )


class Efficiency(_Section):
    mfu: Num | None = Field(None, gt=0, le=1, description="When absent the layout model predicts it")
    mfu_range: tuple[Num, Num] | None = Field(
        None, description="(low, high) for the Monte Carlo; default ±25%"
    )

    @model_validator(mode="after")
    def _range(self) -> Efficiency:
        if self.mfu_range is not None:
            lo, hi = self.mfu_range
            if not (0 < lo <= hi <= 1):
                raise ValueError("mfu_range must be (low, high) with 0 < low <= high <= 1")
        return self


class Cost(_Section):
    currency: Literal["USD", "CNY"] = "USD"
    usd_to_cny: Num | None = Field(None, gt=0, le=1000)
    electricity_per_kwh: Num | None = Field(None, ge=0, le=100)
    pue: Num | None = Field(None, ge=1, le=5)
    cloud_price_per_card_hour: Num | None = Field(None, ge=0, le=1e5)
    cloud_reserved_price_per_card_hour: Num | None = Field(None, ge=0, le=1e5)
    server_price: Num | None = Field(None, ge=0, le=1e10, description="Whole server including its cards")
    switch_price: Num | None = Field(None, ge=0, le=1e9)
    transceiver_price: Num | None = Field(None, ge=0, le=1e7)
    depreciation_years: Num | None = Field(None, gt=0, le=30)
    utilization: Num | None = Field(None, gt=0, le=1)
    budget: Num | None = Field(None, gt=0, le=1e14)
    price_book: Annotated[str, AfterValidator(_book_reference)] | None = Field(
        None,
        max_length=110,
        json_schema_extra={"pattern": f"^{PRICE_BOOK_REFERENCE}$"},
        description="A team's price book, '<team>/<book>' (its latest version) or '<team>/<book>@<version>'; "
        "its prices replace the catalog's, explicit cost fields still win",
    )


class Serving(_Section):
    context_len: Int = Field(8192, ge=1, le=100_000_000)
    concurrency: Int | None = Field(None, ge=1, le=100_000_000)
    kv_dtype: Literal["bf16", "fp16", "fp8", "int8", "fp32"] = "bf16"
    weights_dtype: Literal["bf16", "fp16", "fp8", "int8", "int4", "fp32"] = "bf16"
    cards: Int | None = Field(
        None, ge=1, le=limits.MAX_CARDS, description="Cards serving one replica; default a node"
    )


class Reliability(_Section):
    """Failures, checkpoints and restarts (estimator.plan.goodput); rates from catalog/failures.toml."""

    failures: bool = Field(True, description="false: plan as if nothing ever failed (days = compute days)")
    spare_nodes: Int = Field(
        0,
        ge=0,
        le=4096,
        description="Hot standby nodes (bought, not training) that take a failed node's ranks",
    )
    checkpoint_interval_s: Num | None = Field(
        None, gt=0, le=1e7, description="Compute seconds between checkpoints; default Daly's optimum"
    )
    detection_s: Num | None = Field(None, ge=0, le=1e5, description="Seconds to detect an interruption")
    rescheduling_s: Num | None = Field(
        None, ge=0, le=1e6, description="Seconds to replace the node and restart the job (before the reload)"
    )
    rate_scale: Num | None = Field(
        None,
        gt=0,
        le=100,
        description="Multiplier on the catalog's interruption rates (default the vendor's)",
    )


class Uncertainty(_Section):
    samples: Int = Field(10_000, ge=100, le=limits.MAX_MC_SAMPLES, description="Monte Carlo draws")
    seed: Int = Field(20261129, ge=0, le=2**32 - 1)
    price_spread: Num = Field(0.2, ge=0, lt=1, description="± fraction around likely prices")


class Pilot(_Section):
    """A run the team measured (estimator.plan.calibration): its size, layout, batch and what was
    measured. The model, hardware and stack are the scenario's unless named here."""

    cards: Int = Field(ge=1, le=limits.MAX_CARDS, description="Cards of the pilot run")
    parallelism: Parallelism | None = Field(None, description="The pilot's layout; searched when absent")
    seq_len: Int = Field(ge=16, le=10_000_000)
    global_batch_tokens: Num = Field(gt=0, le=1e10)
    measured_tokens_per_s_per_card: Num | None = Field(None, gt=0, le=1e9)
    measured_step_time_s: Num | None = Field(None, gt=0, le=1e6)
    measured_comm_wait_share: Num | None = Field(
        None, ge=0, lt=1, description="Share of the step spent waiting for communication (profiler)"
    )
    model: ModelSpec | None = Field(
        None, description="The pilot's own model (a smaller one of the same kind)"
    )
    hardware: Hardware | None = Field(
        None, description="The pilot's own hardware (factor carried across chips)"
    )
    stack: str | None = Field(None, max_length=60, description="The pilot's own software stack")

    @model_validator(mode="after")
    def _one_measurement(self) -> Pilot:
        given = (self.measured_tokens_per_s_per_card, self.measured_step_time_s)
        if sum(v is not None for v in given) != 1:
            raise ValueError("give exactly one of measured_tokens_per_s_per_card or measured_step_time_s")
        return self


class Calibration(_Section):
    pilot: Pilot
