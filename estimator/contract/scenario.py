"""The scenario contract v1 (docs/architecture.md#scenario-contract): typed, frozen input models with defaults.

`validate_shape(data)` validates a JSON-like dict and returns a `Scenario`; every rejection is a
`ScenarioError` whose entries name the dotted field path and say what is wrong in one sentence.
Cross-field checks that need the catalog (unknown preset, TP not dividing heads...) live in
`estimator.contract.resolve`; `estimator.contract.resolve.parse_scenario` runs both, so one call rejects everything
rejectable. This module imports nothing else of the core but `errors` (no cycle with resolve).

Units: tokens are counts, seconds are seconds, bandwidths Gb/s where the name says `gbps`,
prices are in `cost.currency` (USD default) per the unit in the name.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Final, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic_core import ErrorDetails

from estimator import limits
from estimator.catalog.entries import CHIP_FAMILIES, ChipFamily
from estimator.errors import FieldError, ScenarioError
from estimator.jsonio import check_tree
from estimator.model.config_json import CONFIG_ALIASES

SCENARIO_VERSION: Final = 1
# "<team slug>/<book slug>" with an optional "@<version>": a price book (estimator.contract.price_book)
PRICE_BOOK_REFERENCE: Final = r"[a-z0-9][a-z0-9_-]{0,49}/[a-z0-9][a-z0-9_-]{0,49}(@[1-9][0-9]{0,8})?"


def _number(value: Any) -> Any:
    """JSON numbers only: refuse strings and booleans that lax parsing would coerce."""
    if isinstance(value, (bool, str)):
        raise ValueError("must be a JSON number, not a string or boolean")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number (NaN and Infinity are not allowed)")
    return value


def _integer(value: Any) -> Any:
    value = _number(value)
    if isinstance(value, float):
        if value != int(value):
            raise ValueError("must be a whole number")
        return int(value)
    return value


def _book_reference(value: str) -> str:
    if re.fullmatch(PRICE_BOOK_REFERENCE, value) is None:
        raise ValueError("must be '<team>/<book>' or '<team>/<book>@<version>' (lowercase slugs)")
    return value


Num = Annotated[float, BeforeValidator(_number)]
Int = Annotated[int, BeforeValidator(_integer)]


def _pos(le: float, **kw: Any) -> Any:
    return Field(gt=0, le=le, **kw)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ModelSpec(BaseModel):
    """A catalog `preset`, a dense model known only by `params`, or an architecture with
    Hugging Face config.json names; preset fields may be overridden one by one. Besides these
    fields, the config.json aliases in CONFIG_EXTRA_KEYS are accepted (with the same ranges as the
    field they stand for); any other key is refused."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)

    preset: str | None = Field(None, max_length=100)
    params: Num | None = Field(None, gt=0, le=1e14, description="Total parameters of a dense model")
    num_hidden_layers: Int | None = Field(None, ge=1, le=limits.MAX_LAYERS)
    hidden_size: Int | None = Field(None, ge=1, le=1_000_000)
    num_attention_heads: Int | None = Field(None, ge=1, le=100_000)
    num_key_value_heads: Int | None = Field(None, ge=1, le=100_000)
    head_dim: Int | None = Field(None, ge=1, le=100_000)
    intermediate_size: Int | None = Field(None, ge=1, le=10_000_000)
    vocab_size: Int | None = Field(None, ge=1, le=100_000_000)
    tie_word_embeddings: bool | None = None
    hidden_act: str | None = Field(None, max_length=40)
    num_experts: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    n_routed_experts: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    num_experts_per_tok: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    n_shared_experts: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    moe_intermediate_size: Int | None = Field(None, ge=0, le=10_000_000)
    first_k_dense_replace: Int | None = Field(None, ge=0, le=limits.MAX_LAYERS)
    q_lora_rank: Int | None = Field(None, ge=0, le=1_000_000)
    kv_lora_rank: Int | None = Field(None, ge=0, le=1_000_000)
    qk_nope_head_dim: Int | None = Field(None, ge=0, le=100_000)
    qk_rope_head_dim: Int | None = Field(None, ge=0, le=100_000)
    v_head_dim: Int | None = Field(None, ge=0, le=100_000)
    max_position_embeddings: Int | None = Field(None, ge=1, le=100_000_000)
    hidden_dropout: Num | None = Field(None, ge=0, lt=1)
    attention_dropout: Num | None = Field(None, ge=0, lt=1)
    sliding_window: Int | None = Field(
        None, ge=1, le=100_000_000, description="Local attention window (tokens)"
    )
    sliding_window_layers: Int | None = Field(
        None, ge=0, le=limits.MAX_LAYERS, description="Layers with the window; default all (or layer_types)"
    )
    use_sliding_window: bool | None = None
    sliding_window_pattern: Int | None = Field(None, ge=1, le=limits.MAX_LAYERS)
    layer_types: list[Literal["sliding_attention", "full_attention"]] | None = Field(
        None, max_length=limits.MAX_LAYERS
    )


# config.json names the core also reads (estimator.model.config_json.architecture_from_config): each alias is
# range-checked like the field it stands for; `model_type` and Qwen2-MoE's shared-expert width too.
CONFIG_EXTRA_KEYS: dict[str, str] = {
    alias: field for field, aliases in CONFIG_ALIASES.items() for alias in aliases
}
_AliasCheck = create_model(  # type: ignore[call-overload]
    "_AliasCheck",
    __config__=ConfigDict(extra="forbid", allow_inf_nan=False),
    model_type=(str | None, Field(None, max_length=60)),
    shared_expert_intermediate_size=(Int | None, Field(None, ge=0, le=10_000_000)),
    **{
        alias: (ModelSpec.model_fields[field].annotation, ModelSpec.model_fields[field])
        for alias, field in CONFIG_EXTRA_KEYS.items()
    },
)


# Every name of `model` the estimator reads: the ModelSpec fields, the config.json aliases, and
# `model_type` and Qwen2-MoE's `shared_expert_intermediate_size`; the rest of a config.json is ignored.
READ_MODEL_KEYS = frozenset(
    {*ModelSpec.model_fields, *CONFIG_EXTRA_KEYS, "model_type", "shared_expert_intermediate_size"}
)


def split_model(model: Any) -> tuple[Any, list[str]]:
    """A complete Hugging Face config.json -> (the names the estimator reads, the ignored names
    sorted). A multimodal config keeps its language model under `text_config` (Qwen2-VL, Llama 4,
    Gemma 3): without a top-level hidden_size that part is read, and the rest is ignored."""
    if not isinstance(model, dict):
        return model, []
    ignored: list[str] = []
    if "hidden_size" not in model and isinstance(model.get("text_config"), dict):
        ignored = [k for k in model if k != "text_config"]
        model = model["text_config"]
    ignored += [k for k in model if k not in READ_MODEL_KEYS]
    return {k: v for k, v in model.items() if k in READ_MODEL_KEYS}, sorted(ignored)


def _model_extras(model: Any) -> list[FieldError]:
    """Errors of the keys of `model` that are not ModelSpec fields: config.json aliases out of
    range, and unknown keys (refused rather than stored and echoed)."""
    if not isinstance(model, dict):
        return []
    extras = {k: v for k, v in model.items() if k not in ModelSpec.model_fields}
    if not extras:
        return []
    try:
        _AliasCheck.model_validate(extras)
    except ValidationError as exc:
        out = []
        for err in exc.errors():
            key = str(err["loc"][0]) if err["loc"] else ""
            if err.get("type") == "extra_forbidden":
                message = "is not a model field or a config.json name the estimator reads; remove it"
            else:
                message = _message(err)
            out.append(FieldError(f"model.{key}" if key else "model", message))
        return out
    return []


def _pilot_model_extras(calibration: Any) -> list[FieldError]:
    """_model_extras of calibration.pilot.model, with its path."""
    pilot = calibration.get("pilot") if isinstance(calibration, dict) else None
    model = pilot.get("model") if isinstance(pilot, dict) else None
    return [FieldError("calibration.pilot." + e.field, e.message) for e in _model_extras(model)]


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
    stack_overrides: dict[str, bool | int | str | list[str] | None] = Field(
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


class InlineAccelerator(_Section):
    """A chip the catalog lacks. Units as in the catalog: FLOP/s, bytes, bytes/s, W, USD."""

    id: str = Field("custom", max_length=60)
    name: str = Field("Custom accelerator", max_length=120)
    vendor: str = Field("custom", max_length=60)
    peak_flops_bf16: Num = _pos(1e18)
    peak_flops_fp8: Num | None = Field(None, gt=0, le=1e18)
    peak_flops_fp32: Num | None = Field(None, gt=0, le=1e18)
    hbm_bytes: Num = _pos(1e14)
    hbm_bandwidth_bytes_per_s: Num = _pos(1e15)
    scaleup_link: str = Field("custom", max_length=60)
    scaleup_bandwidth_bytes_per_s: Num = Field(100e9, gt=0, le=1e15)
    scaleup_domain_cards: Int = Field(8, ge=1, le=limits.MAX_SCALEUP_DOMAIN)
    tdp_w: Num = Field(700, gt=0, le=100_000)
    price_usd: Num = Field(25_000, ge=0, le=1e9)
    cloud_price_usd_per_card_hour: Num = Field(2.5, ge=0, le=1e5)
    cloud_reserved_usd_per_card_hour: Num = Field(1.6, ge=0, le=1e5)
    matmul_efficiency: Num = Field(0.75, gt=0, le=1)
    default_server: str = Field("generic-8card", max_length=60)
    chip_family: ChipFamily = Field(
        description="The chip generation that sets attention-kernel efficiency (catalog.entries.CHIP_FAMILIES): "
        + ", ".join(CHIP_FAMILIES)
    )


class Hardware(_Section):
    accelerator: str | InlineAccelerator = "ascend-910b2"
    server: str | None = Field(None, max_length=60, description="Default: the accelerator's server")
    cards_per_node: Int | None = Field(None, ge=1, le=limits.MAX_SCALEUP_DOMAIN)
    overrides: dict[str, Num] = Field(
        default_factory=dict, description="Single catalog fields of the accelerator"
    )


class Cluster(_Section):
    """How the cluster is sized: exactly one of a card count, a deadline, or a capital budget."""

    cards: Int | None = Field(None, ge=1, le=limits.MAX_CARDS)
    target_days: Num | None = Field(None, gt=0, le=3650)
    # --- budget sizing (estimator/money/budget.py) ---
    budget: Num | None = Field(
        None,
        gt=0,
        le=1e14,
        description="Capital budget in cost.currency: the largest cluster whose capex fits (estimator.money.budget)",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> Cluster:
        if sum(v is not None for v in (self.cards, self.target_days, self.budget)) != 1:
            raise ValueError(
                "give exactly one of cluster.cards (how long?), cluster.target_days (how many cards?) "
                "or cluster.budget (what does it buy?)"
            )
        return self


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


class Parallelism(_Section):
    tp: Int | None = Field(None, ge=1, le=4096)
    pp: Int | None = Field(None, ge=1, le=4096)
    dp: Int | None = Field(None, ge=1, le=limits.MAX_CARDS)
    ep: Int | None = Field(None, ge=1, le=limits.MAX_EXPERTS)
    cp: Int | None = Field(None, ge=1, le=1024)
    micro_batch_size: Int | None = Field(None, ge=1, le=4096)
    virtual_stages: Int | None = Field(None, ge=1, le=128)
    sequence_parallel: bool | None = None
    zero_stage: Int | None = Field(None, ge=0, le=3)
    recompute: Literal["none", "selective", "full", "partial"] | None = Field(
        None, description="partial: Megatron block recompute of the fewest layers per stage that fit in HBM"
    )
    distributed_optimizer: bool | None = None
    expert_tp: Int | None = Field(
        None,
        ge=1,
        le=1024,
        description="Expert tensor parallel size (Megatron-Core --expert-tensor-parallel-size, MoE parallel "
        "folding: EP is formed over TP x CP x DP ranks); searched over 1 and tp when absent",
    )
    first_stage_layers: Int | None = Field(
        None,
        ge=0,
        le=limits.MAX_LAYERS,
        description="Layers on the first pipeline device (Megatron --decoder-first-pipeline-num-layers); "
        "the devices without a fixed count share the rest evenly",
    )
    last_stage_layers: Int | None = Field(
        None,
        ge=0,
        le=limits.MAX_LAYERS,
        description="Layers on the last pipeline device (Megatron --decoder-last-pipeline-num-layers)",
    )

    def fixed(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    @property
    def replica_cards(self) -> int:
        """Cards one model replica of the fixed layout spans: tp·pp·cp (an unset degree counts 1)."""
        return (self.tp or 1) * (self.pp or 1) * (self.cp or 1)

    @property
    def layout_cards(self) -> int:
        """Product of the fixed degrees tp·pp·cp·dp (an unset degree counts 1); a card count."""
        return self.replica_cards * (self.dp or 1)

    @property
    def dp_fixed(self) -> bool:
        """Whether tp, pp and dp are all fixed, so the layout must use exactly `layout_cards` cards."""
        return self.tp is not None and self.pp is not None and self.dp is not None

    def fits_cards(self, cards: ArrayLike) -> NDArray[np.bool_]:
        """The contract's one rule for a fixed layout on `cards` cards (vectorized over `cards`):
        with tp, pp and dp all fixed, tp·pp·cp·dp must equal the cards; otherwise the product of the
        fixed degrees must divide them (each of the cards / product replicas is a DP rank)."""
        c = np.asarray(cards, dtype=np.int64)
        prod = self.layout_cards
        if self.dp_fixed:
            return np.asarray(c == prod)
        return np.asarray((c >= prod) & (c % prod == 0))


class Network(_Section):
    switch: str | None = Field(None, max_length=60, description="Catalog switch id; default by port speed")
    switch_ports: Int = Field(64, ge=4, le=4096)
    port_gbps: Num | None = Field(None, gt=0, le=100_000, description="Default: the NIC speed")
    oversubscription: Num = Field(1.0, ge=1, le=64, description="Leaf down:up ratio")
    rail_optimized: bool = True
    nics_per_node: Int | None = Field(None, ge=1, le=64)
    nic_gbps: Num | None = Field(None, gt=0, le=100_000)
    storage_network: bool = False
    hccl_buffsize_mb: Int | None = Field(
        None, ge=1, le=65536, description="HCCL_BUFFSIZE / NCCL buffer per communicator (MB); default 256"
    )


class Storage(_Section):
    checkpoint_interval_s: Num = Field(3600, gt=0, le=1e7)
    checkpoint_write_s: Num = Field(120, gt=0, le=1e6)
    checkpoints_kept: Int = Field(5, ge=1, le=10_000)
    checkpoint_bytes_per_param: Num = Field(12, gt=0, le=64, description="fp32 master + Adam m, v = 12")
    raw_bytes_per_token: Num = Field(4, gt=0, le=1000)
    warm_redundancy: Num = Field(
        1.25, ge=1, le=10, description="8+2 erasure coding = 1.25; 3x replication = 3"
    )
    archive_checkpoints: Int = Field(10, ge=0, le=100_000)


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


class Scenario(_Section):
    version: Literal[1] = SCENARIO_VERSION
    name: str = Field("", max_length=200)
    model: ModelSpec
    training: Training
    hardware: Hardware = Field(default_factory=Hardware)
    cluster: Cluster
    efficiency: Efficiency = Field(default_factory=Efficiency)
    parallelism: Parallelism = Field(default_factory=Parallelism)
    network: Network = Field(default_factory=Network)
    storage: Storage = Field(default_factory=Storage)
    cost: Cost = Field(default_factory=Cost)
    serving: Serving | None = None
    uncertainty: Uncertainty = Field(default_factory=Uncertainty)
    reliability: Reliability = Field(default_factory=Reliability)
    calibration: Calibration | None = None

    # config.json names of `model` the estimator does not read (split_model): listed in the result's
    # model.ignored_fields, never part of the scenario (nor of normalized())
    _ignored_model_fields: tuple[str, ...] = PrivateAttr(default=())

    @property
    def ignored_model_fields(self) -> tuple[str, ...]:
        return self._ignored_model_fields

    def normalized(self) -> dict[str, Any]:
        """The scenario with every default filled, as plain JSON; resolve.parse_scenario(normalized) is a fixpoint."""
        data = self.model_dump(mode="json")
        data["model"] = {k: v for k, v in data["model"].items() if v is not None}
        for optional in ("serving", "calibration"):
            if data.get(optional) is None:
                data.pop(optional, None)
        pilot = (data.get("calibration") or {}).get("pilot")
        if pilot is not None:
            pilot = {k: v for k, v in pilot.items() if v is not None}
            if "model" in pilot:
                pilot["model"] = {k: v for k, v in pilot["model"].items() if v is not None}
            data["calibration"]["pilot"] = pilot
        return data


def _path(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if not (isinstance(p, str) and p in {"str", "InlineAccelerator"})]
    return ".".join(parts)


def _message(err: ErrorDetails) -> str:
    msg = str(err.get("msg", "is invalid"))
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    if err.get("type") == "extra_forbidden":
        return "is not a field of the scenario contract"
    if err.get("type") == "missing":
        return "is required"
    return msg[0].lower() + msg[1:] if msg else msg


def validate_shape(data: Any) -> Scenario:
    """Type and range checks only (no catalog); raises ScenarioError with every field at fault."""
    if not isinstance(data, dict):
        raise ScenarioError("the scenario must be a JSON object", field="")
    check_tree(data)  # NUL, lone surrogates, depth, duplicate keys: before anything is stored
    model, ignored = split_model(data.get("model"))
    if ignored:
        data = {**data, "model": model}
    extra_errors = _model_extras(data.get("model"))
    extra_errors += _pilot_model_extras(data.get("calibration"))
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        errors: list[FieldError] = []
        seen: set[str] = set()
        for err in exc.errors():
            loc = err["loc"]
            if "str" in loc and isinstance(err.get("input"), dict):
                continue  # the inline-object branch of a str|object union reports the real fault
            field = _path(loc)
            if field in seen:
                continue
            seen.add(field)
            errors.append(FieldError(field, _message(err)))
        raise ScenarioError(errors + [e for e in extra_errors if e.field not in seen]) from None
    if extra_errors:
        raise ScenarioError(extra_errors)
    scenario._ignored_model_fields = tuple(ignored)
    return scenario


def scenario_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the v1 scenario input."""
    schema: dict[str, Any] = _standard_bounds(Scenario.model_json_schema())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "ClusterPlan scenario v1"
    schema["description"] = (
        "Work budget per request (estimator.limits): at most "
        f"{limits.MAX_LAYERS:,} layers, {limits.MAX_EXPERTS:,} experts, {limits.MAX_CARDS:,} cards, "
        f"{limits.MAX_MC_SAMPLES:,} Monte Carlo samples, {limits.MAX_LAYOUT_CANDIDATES:,} layout "
        f"candidates (else 400 on cluster.cards), a {limits.SEARCH_SECONDS:g} s layout search, JSON nested "
        f"at most {limits.MAX_JSON_DEPTH} levels, bodies of at most {limits.MAX_BODY_BYTES:,} bytes (413). "
        "No duplicate keys; no NUL or lone surrogates in any string."
    )
    return schema


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _standard_bounds(node: Any) -> Any:
    """Pydantic writes the bounds of optional constrained numbers as `ge`/`le` (not JSON Schema
    keywords, so validators and API tools ignore them); rename them to minimum/maximum."""
    if isinstance(node, dict):
        typed = node.get("type") in ("integer", "number")
        return {(_BOUNDS[k] if typed and k in _BOUNDS else k): _standard_bounds(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_standard_bounds(v) for v in node]
    return node
