"""The one label table: every term and setting key the core emits, in the reader's language.

The core names things by key: the step-time terms (`parallelism.breakdown_s`, estimator.layout.
steptime.step.BREAKDOWN_KEYS and COMPUTE_TERMS), the parts of the capital cost (`cost.capex`), the
starting configuration's settings and worded values (estimator.plan.starting_config.SETTINGS), the
scenario fields a sweep can vary (its axes) and the sweep's metrics. Pages, charts, the Excel and
CSV files take their words from here; the sentences (warnings, advice, reasons) are in
reports.messages. tests/web/test_labels.py enumerates the keys from the core's registries and checks
that each has a label here and a zh-Hans translation.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from estimator.contract.scenario import Hardware, ModelSpec, Parallelism

STEP_TERMS = {
    "compute": _("Compute"),
    "gemm": _("Matrix multiplications (GEMM)"),
    "attention": _("Attention"),
    "elementwise": _("Element-wise kernels"),
    "moe_experts": _("MoE experts"),
    "moe_routing": _("MoE routing"),
    "host_overhead": _("Host overhead (kernel launches)"),
    "bubble": _("Pipeline bubble"),
    "tp_comm": _("TP communication"),
    "pp_comm": _("PP communication"),
    "dp_comm": _("DP communication"),
    "ep_comm": _("EP communication"),
    "cp_comm": _("CP communication"),
    "overlap_slowdown": _("Slowdown from overlapped communication"),
    "optimizer": _("Optimizer"),
    "recompute": _("Recompute"),  # results stored before the term moved into compute
}

# The terms a diagnosis compares (estimator.plan.diagnose.TERMS)
DIAGNOSIS_TERMS = {
    "compute": _("Compute"),
    "communication": _("Communication wait"),
    "data_loading": _("Data loading"),
    "other": _("Other (bubble, overlap, stalls)"),
}

MEMORY_TERMS = {
    "weights": _("Weights"),
    "gradients": _("Gradients"),
    "optimizer": _("Optimizer states"),
    "activations": _("Activations"),
    "other": _("Buffers and other"),
}

CAPEX_PARTS = {
    "compute": _("Compute"),
    "network": _("Network"),
    "storage": _("Storage"),
    "scaleup": _("Scale-up plane (supernodes)"),
    "facility": _("Facility"),
}

# The starting configuration's settings (environment variables are shown as they are typed).
SETTINGS = {
    "precision": _("Precision"),
    "recompute": _("Activation recomputation"),
    "layout": _("Parallel layout"),
    "micro_batches": _("Micro-batches per step"),
    "gradient_compression": _("Gradient compression"),
    "gradient_fusion": _("Gradient fusion"),
    "zero_stage": _("ZeRO stage"),
    "expert_parallel": _("Expert parallelism (MoE folding)"),
    "pipeline_split": _("Pipeline split"),
}
SETTING_VALUES = {
    "none": _("none"),
    "selective": _("selective"),
    "full": _("full"),
    "partial": _("partial (fewest layers that fit)"),
    "bf16": "BF16",
    "fp8": "FP8",
}

# Scenario fields (a sweep's axes; the names of the form's fields where they have one).
AXES = {
    "model.preset": _("Model preset"),
    "model.params": _("Parameters"),
    "model.num_hidden_layers": _("Layers"),
    "model.hidden_size": _("Hidden size"),
    "model.num_attention_heads": _("Attention heads"),
    "model.num_key_value_heads": _("Key-value heads"),
    "model.head_dim": _("Head dimension"),
    "model.intermediate_size": _("MLP width"),
    "model.vocab_size": _("Vocabulary size"),
    "model.tie_word_embeddings": _("Tied embeddings"),
    "model.hidden_act": _("Activation function"),
    "model.num_experts": _("Experts"),
    "model.n_routed_experts": _("Routed experts"),
    "model.num_experts_per_tok": _("Experts per token"),
    "model.n_shared_experts": _("Shared experts"),
    "model.moe_intermediate_size": _("Expert MLP width"),
    "model.first_k_dense_replace": _("Dense layers before the MoE layers"),
    "model.q_lora_rank": _("Query low-rank dimension"),
    "model.kv_lora_rank": _("Key-value low-rank dimension"),
    "model.qk_nope_head_dim": _("Query-key head dimension without rotary"),
    "model.qk_rope_head_dim": _("Query-key rotary head dimension"),
    "model.v_head_dim": _("Value head dimension"),
    "model.max_position_embeddings": _("Maximum positions"),
    "model.hidden_dropout": _("Hidden dropout"),
    "model.attention_dropout": _("Attention dropout"),
    "model.sliding_window": _("Sliding window"),
    "model.sliding_window_layers": _("Sliding-window layers"),
    "model.use_sliding_window": _("Sliding-window attention"),
    "model.sliding_window_pattern": _("Sliding-window pattern"),
    "model.num_nextn_predict_layers": _("Multi-token-prediction modules"),
    "model.layer_types": _("Layer types"),
    "model.rope_scaling": _("Rotary scaling"),
    "model.expert_bias": _("Expert biases"),
    "training.tokens": _("Training tokens"),
    "training.seq_len": _("Sequence length"),
    "training.global_batch_tokens": _("Global batch (tokens)"),
    "training.precision": _("Precision"),
    "training.grad_dtype": _("Gradient number format"),
    "training.attention_flops": _("Attention FLOPs counted"),
    "training.flash_attention": _("Fused attention"),
    "training.stack": _("Software stack"),
    "training.stack_overrides": _("Software stack changes"),
    "training.moe_imbalance": _("Expert load imbalance"),
    "hardware.accelerator": _("Accelerator"),
    "hardware.server": _("Server"),
    "hardware.cards_per_node": _("Cards per server"),
    "hardware.overrides": _("Accelerator changes"),
    "cluster.cards": _("Cards"),
    "cluster.target_days": _("Deadline (days)"),
    "cluster.deadline_confidence": _("Chance of meeting the deadline"),
    "cluster.budget": _("Budget"),
    "efficiency.mfu": _("MFU"),
    "efficiency.mfu_range": _("MFU range"),
    "parallelism.tp": _("Tensor parallel (TP)"),
    "parallelism.pp": _("Pipeline parallel (PP)"),
    "parallelism.dp": _("Data parallel (DP)"),
    "parallelism.ep": _("Expert parallel (EP)"),
    "parallelism.cp": _("Context parallel (CP)"),
    "parallelism.micro_batch_size": _("Micro-batch size"),
    "parallelism.virtual_stages": _("Virtual stages"),
    "parallelism.sequence_parallel": _("Sequence parallel"),
    "parallelism.zero_stage": _("ZeRO stage"),
    "parallelism.recompute": _("Activation recomputation"),
    "parallelism.distributed_optimizer": _("Distributed optimizer"),
    "parallelism.expert_tp": _("Expert tensor parallel"),
    "parallelism.first_stage_layers": _("Layers on the first pipeline device"),
    "parallelism.last_stage_layers": _("Layers on the last pipeline device"),
    "network.switch": _("Switch"),
    "network.switch_ports": _("Switch ports"),
    "network.port_gbps": _("Port speed (Gb/s)"),
    "network.oversubscription": _("Oversubscription"),
    "network.rail_optimized": _("Rail-optimized"),
    "network.nics_per_node": _("NICs per server"),
    "network.nic_gbps": _("NIC speed (Gb/s)"),
    "network.storage_network": _("Storage network"),
    "network.hccl_buffsize_mb": _("HCCL buffer (MB)"),
    "storage.checkpoint_interval_s": _("Checkpoint interval (s)"),
    "storage.checkpoint_write_s": _("Checkpoint write window (s)"),
    "storage.checkpoints_kept": _("Checkpoints kept"),
    "storage.checkpoint_bytes_per_param": _("Checkpoint bytes per parameter"),
    "storage.raw_bytes_per_token": _("Raw data bytes per token"),
    "storage.warm_redundancy": _("Warm tier redundancy"),
    "storage.archive_checkpoints": _("Archived checkpoints"),
    "cost.currency": _("Currency"),
    "cost.usd_to_cny": _("Exchange rate (CNY per USD)"),
    "cost.electricity_per_kwh": _("Electricity (per kWh)"),
    "cost.pue": _("PUE"),
    "cost.cloud_price_per_card_hour": _("Cloud price (per card-hour)"),
    "cost.cloud_reserved_price_per_card_hour": _("Reserved cloud price (per card-hour)"),
    "cost.server_price": _("Server price"),
    "cost.switch_price": _("Switch price"),
    "cost.transceiver_price": _("Transceiver price"),
    "cost.depreciation_years": _("Depreciation (years)"),
    "cost.utilization": _("Utilisation"),
    "cost.budget": _("Budget"),
    "cost.price_book": _("Price book"),
    "serving.context_len": _("Serving context length"),
    "serving.concurrency": _("Concurrent requests"),
    "serving.kv_dtype": _("KV cache number format"),
    "serving.weights_dtype": _("Serving weights number format"),
    "serving.cards": _("Serving cards"),
    "uncertainty.samples": _("Uncertainty samples"),
    "uncertainty.seed": _("Uncertainty seed"),
    "uncertainty.price_spread": _("Price spread"),
    "reliability.failures": _("Count failures"),
    "reliability.spare_nodes": _("Hot standby nodes"),
    "reliability.checkpoint_interval_s": _("Checkpoint interval (s)"),
    "reliability.detection_s": _("Seconds to detect an interruption"),
    "reliability.rescheduling_s": _("Seconds to reschedule after an interruption"),
    "reliability.rate_scale": _("Interruption rate multiplier"),
    "calibration.pilot.measured_tokens_per_s_per_card": _("Pilot's measured tokens/s per card"),
    "calibration.pilot.measured_step_time_s": _("Pilot's measured step time"),
    "calibration.pilot.measured_comm_wait_share": _("Pilot's measured communication wait"),
}
# A pilot's conditions (its cards, batch, stack, layout, model, hardware) are part of what it
# measured: varying them without measuring again means nothing, so they are no axis; its
# measurements are (a sensitivity sweep).
PILOT_CONDITIONS = tuple(
    f"calibration.pilot.{name}" for name in ("cards", "seq_len", "global_batch_tokens", "stack")
) + tuple(
    f"calibration.pilot.{section}.{name}"
    for section, model in (("parallelism", Parallelism), ("model", ModelSpec), ("hardware", Hardware))
    for name in model.model_fields
)
NOT_AXES = ("version", "name", *PILOT_CONDITIONS)  # scenario fields that are no quantity to sweep

# A sweep's metrics (sweeps.digests.RANK_METRICS)
METRICS = {
    "compute.wall_clock_days": _("days without failures"),
    "cost.run.owned": _("run cost, owned"),
    "cost.run.cloud": _("run cost, cloud"),
    "cost.capex.total": _("cluster cost (capex)"),
    "power.facility_w": _("facility power"),
}

# A scale-up plane's descriptive values (catalog supernodes: medium, cooling; scaleup tiers: where)
PLANE_VALUES = {
    "optics": _("optics"),
    "copper": _("copper"),
    "liquid": _("liquid"),
    "air": _("air"),
    "hybrid": _("liquid and air"),
    "node": _("in the nodes"),
    "switch rack": _("switch racks"),
    "compute rack": _("compute racks"),
}

# Chip generations (the catalog's chip_family, estimator.catalog.entries.CHIP_FAMILIES): product
# names in every language
CHIP_FAMILIES = {
    "ampere": "NVIDIA Ampere",
    "hopper": "NVIDIA Hopper",
    "blackwell": "NVIDIA Blackwell",
    "cdna3": "AMD CDNA 3",
    "ascend-910b": "Ascend 910B",
    "ascend-910c": "Ascend 910C",
    "ascend-310p": "Ascend 310P",
}

# The validation page (estimator.validation): each suite and metric of its rows
VALIDATION_SUITES = {
    "megatron-2021": _("Megatron-LM 2021: throughput by model size"),
    "zero-2019": _("ZeRO 2019: model-state memory by stage"),
    "superpod-h100": _("DGX H100 reference architecture: switches and cables"),
    "model-params": _("Model parameter counts"),
    "source-article": _("The source article's example"),
    "llama3-2024": _("Llama 3 2024: throughput"),
    "moe": _("Mixture-of-experts runs"),
    "fp8": _("FP8 runs"),
    "long-context": _("Long-context runs"),
    "ascend": _("Ascend runs"),
    "dense": _("Dense-model runs"),
    "blackwell": _("Blackwell runs"),
    "blackwell-releases": _("Blackwell MoE runs of other releases"),
    "moe-layouts": _("MoE layouts (parallel folding)"),
    "ascend-gpu-reference": _("MindSpeed-LLM's GPU reference runs"),
    "reliability": _("Failures and effective training time"),
}
VALIDATION_METRICS = {
    "tokens/s per GPU": _("tokens/s per card"),
    "total params": _("total parameters"),
    "active params": _("active parameters"),
    "model TFLOP/s per GPU": _("model TFLOP/s per card"),
    "hardware TFLOP/s per GPU": _("hardware TFLOP/s per card"),
    "training FLOP": _("training FLOP"),
    "card-years at 320 TF, 50%": _("card-years at 320 TFLOP/s and 50% MFU"),
    "cards for 30 days": _("cards for 30 days"),
    "model-state GB per card": _("model-state GB per card"),
    "leaf_switches": _("Leaf switches"),
    "spine_switches": _("Spine switches"),
    "node_leaf_cables": _("server-to-leaf cables"),
    "leaf_spine_cables": _("leaf-to-spine cables"),
    "unexpected interruptions in 54 days (rates from this table)": _(
        "unexpected interruptions in 54 days (rates from this table)"
    ),
    # the publication is in the row's source column; the metric names only the quantity
    "mean time between failures, h (Kokolis et al. 2024 RSC-1 projection)": _(
        "mean time between failures, h (projected from the published cluster)"
    ),
    "ETTR, async checkpoints and 6-minute restarts (published: over 90%)": _(
        "ETTR, async checkpoints and 6-minute restarts (published: over 90%)"
    ),
    "ETTR, catalog defaults: sync checkpoints, 20-minute restarts (published: over 90%)": _(
        "ETTR, catalog defaults: sync checkpoints, 20-minute restarts (published: over 90%)"
    ),
}

# Against failures (estimator.plan.goodput): the levers of result.goodput.levers, the checkpoint modes
GOODPUT_LEVERS = {
    "faster-hot-tier": _("a hot storage tier twice as fast"),
    "async-checkpoints": _("asynchronous checkpoints"),
    "in-memory-checkpoints": _("in-memory checkpoints replicated to peer nodes"),
    "spare-nodes": _("hot standby nodes"),
}
FAILURE_CAUSES = {  # estimator/catalog/failures.py CAUSES
    "accelerator": _("accelerator"),
    "hbm": _("HBM"),
    "host": _("host"),
    "host_maintenance": _("unplanned host maintenance"),
    "network": _("network switch or cable"),
    "software": _("software"),
}
CHECKPOINT_MODES = {
    "sync": _("synchronous"),
    "async": _("asynchronous"),
    "in-memory": _("in memory, replicated"),
}


def _get(table: dict, key: str) -> str:
    return str(table.get(key, key))


def step_term(key: str) -> str:
    return _get(STEP_TERMS, key)


def diagnosis_term(key: str) -> str:
    return _get(DIAGNOSIS_TERMS, key)


def memory_term(key: str) -> str:
    return _get(MEMORY_TERMS, key)


def capex_part(key: str) -> str:
    return _get(CAPEX_PARTS, key)


def setting(key: str) -> str:
    """A setting in words; an environment variable (HCCL_BUFFSIZE) as it is typed."""
    return _get(SETTINGS, key)


def setting_value(value: object) -> object:
    return str(SETTING_VALUES[value]) if isinstance(value, str) and value in SETTING_VALUES else value


def axis(field: str) -> str:
    """A scenario field (a sweep axis) in words; an unknown field as its dotted name."""
    return _get(AXES, field)


def metric(key: str) -> str:
    return _get(METRICS, key)


def plane_value(value: object) -> object:
    return str(PLANE_VALUES[value]) if isinstance(value, str) and value in PLANE_VALUES else value


def chip_family(key: str) -> str:
    return _get(CHIP_FAMILIES, key)


def suite(key: str) -> str:
    return _get(VALIDATION_SUITES, key)


def validation_metric(key: str) -> str:
    return _get(VALIDATION_METRICS, key)


def goodput_lever(key: str) -> str:
    return _get(GOODPUT_LEVERS, key)


def failure_causes(keys: str) -> str:
    """ "accelerator, hbm, software" -> each cause in the reader's language."""
    return ", ".join(_get(FAILURE_CAUSES, k.strip()) for k in str(keys).split(","))


def checkpoint_mode(key: str) -> str:
    return _get(CHECKPOINT_MODES, key)


def in_sentence(label: str) -> str:
    """A label inside a sentence: lower-case first letter unless it starts an acronym ('EP …')."""
    if len(label) > 1 and label[0].isupper() and label[1].islower():
        return label[0].lower() + label[1:]
    return label
