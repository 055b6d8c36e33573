"""The message catalogue: the core's codes + params rendered in the reader's language.

The core (estimator/) returns every sentence as a `code` with `params` and an English default
(`message`, `suggestion`, `reason`). Here each code has an English msgid marked for gettext
(translations in locale/*/LC_MESSAGES/django.po) and each parameter a formatting kind (Babel, see
reports.formatting). A code this catalogue does not know yet falls back to the core's English
sentence, so a new warning from the core shows up (in English) before it is translated.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop, ngettext_lazy

from . import field_messages, labels
from . import formatting as f

# --- messages ----------------------------------------------------------------------------------
MESSAGES: dict[str, str] = {
    # advice and warnings
    "memory-does-not-fit": gettext_noop(
        "The plan does not fit in card memory (%(total_bytes)s per card against %(hbm_bytes)s of HBM)."
    ),
    "tp-crosses-node": gettext_noop(
        "TP=%(tp)s spans more than the %(domain)s cards of one HCCS/NVLink domain: its per-layer all-reduces would run over RoCE/InfiniBand."
    ),
    "bubble-over-20pct": gettext_noop("The pipeline bubble is %(bubble)s of the step."),
    # estimator.plan.goodput_section.advice
    "goodput-checkpoints": gettext_noop(
        "Checkpoints take %(share)s of the %(days)s; %(lever)s would save %(days_saved)s (cost: %(cost)s)."
    ),
    "goodput-checkpoints.suggestion": gettext_noop("Switch on %(lever)s."),
    "goodput-restarts": gettext_noop(
        "Restarts and re-done work take %(share)s of the %(days)s; %(lever)s would save %(days_saved)s "
        "(cost: %(cost)s)."
    ),
    "goodput-restarts.suggestion": gettext_noop("Switch on %(lever)s."),
    "goodput-checkpoints.free": gettext_noop(
        "Checkpoints take %(share)s of the %(days)s; %(lever)s would save %(days_saved)s with no new hardware."
    ),
    "goodput-restarts.free": gettext_noop(
        "Restarts and re-done work take %(share)s of the %(days)s; %(lever)s would save %(days_saved)s "
        "with no new hardware."
    ),
    "comm-wait-over-30pct": gettext_noop(
        "Communication not hidden behind compute is %(share)s of the step (largest: %(largest)s); above 30%% the network is the bottleneck (article 5.1)."
    ),
    "oversubscribed-fabric-dp": gettext_noop(
        "The fabric is oversubscribed %(ratio)s and DP=%(dp)s gradient traffic crosses leaf switches, so when all nodes exchange gradients at once the all-reduce gets only part of the NIC bandwidth."
    ),
    "flat-network-too-large": gettext_noop(
        "%(nodes)s nodes on a single flat switch layer: the article keeps flat networks to ~10 servers and uses leaf-spine beyond ~16 nodes."
    ),
    "zero3-unneeded": gettext_noop(
        "ZeRO-3 is on although the model fits with ZeRO-2; stage 3 all-gathers the weights in forward and backward, about 1.5x the DP traffic of stage 2 (Rajbhandari et al. 2019)."
    ),
    "fp32-precision": gettext_noop(
        "Training in FP32 doubles weight, gradient and activation memory and runs far below the BF16 peak."
    ),
    "hccl-buffer.set": gettext_noop(
        "HCCL_BUFFSIZE is set to %(current_mb)s MB. The article measured 256 MB ~15%% faster than 64 MB on 8-card DP, with no gain beyond; its '10-20%% of HBM' is an erratum."
    ),
    "hccl-buffer.unset": gettext_noop(
        "HCCL_BUFFSIZE is not set (CANN default 200 MB). The article measured 256 MB ~15%% faster than 64 MB on 8-card DP, with no gain beyond; its '10-20%% of HBM' is an erratum."
    ),
    "ep-crosses-node": gettext_noop(
        "EP=%(ep)s x TP=%(tp)s exceeds the %(domain)s-card HCCS/NVLink domain: the MoE all-to-all runs over the scale-out NICs."
    ),
    "ep-crosses-node.folded": gettext_noop(
        "EP=%(ep)s x expert TP=%(expert_tp)s exceeds the %(domain)s-card HCCS/NVLink domain: the MoE all-to-all runs over the scale-out NICs."
    ),
    "mfu-optimistic": gettext_noop(
        "MFU %(mfu)s is above published large-scale records (Llama 3 405B: 38-43%%; MegaScale: 55%%)."
    ),
    "assumed-shape": gettext_noop(
        "Known only by its size (%(params)s parameters), the model is assumed to have %(basis_name)s's width: "
        "%(num_hidden_layers)s layers, hidden %(hidden_size)s, %(num_attention_heads)s heads, "
        "%(num_key_value_heads)s KV heads, FFN %(intermediate_size)s, vocabulary %(vocab_size)s; the counts "
        "are scaled to exactly that size."
    ),
    # fixed parallelism fields the model cannot take (estimator.contract.resolve._check_parallelism)
    "fixed-tp-heads": gettext_noop("must divide the %(heads)s attention heads"),
    "fixed-tp-kv-heads": gettext_noop("must divide the %(heads)s KV heads"),
    "fixed-pp-layers": gettext_noop("cannot exceed the %(layers)s layers"),
    "fixed-ep-dense": gettext_noop("expert parallelism needs a mixture-of-experts model"),
    "fixed-ep-experts": gettext_noop("must divide the %(experts)s experts"),
    "fixed-virtual-stages-pp": gettext_noop("interleaving needs parallelism.pp > 1"),
    "fixed-dp-cards": gettext_noop("%(names)s = %(product)s must equal cluster.cards = %(cards)s"),
    "fixed-layout-cards": gettext_noop("%(names)s = %(product)s must divide cluster.cards = %(cards)s"),
    "fixed-expert-tp-dense": gettext_noop("expert tensor parallelism needs a mixture-of-experts model"),
    "fixed-stage-layers": gettext_noop(
        "the first and last pipeline stages hold more than the %(layers)s layers"
    ),
    "deadline-needs-too-many-cards": gettext_noop(
        "Training %(tokens)s tokens in %(target_days)s needs at least %(cards)s cards even at an MFU of %(mfu)s, more than "
        "the %(max_cards)s cards of the largest cluster this network can build. Allow more days, train fewer "
        "tokens or use switches with more ports."
    ),
    "deadline-unmet-with-failures": gettext_noop(
        "Training %(tokens)s tokens in %(target_days)s needs %(cards)s cards at an MFU of %(mfu)s without "
        "interruptions, but counting them no cluster up to the %(max_cards)s cards this network can build "
        "finishes in time: more cards are interrupted more often. Allow more days, train fewer tokens or "
        "restart faster."
    ),
    "no-cluster-holds-the-model": gettext_noop(
        "No cluster this network can build (up to %(max_cards)s cards) holds the model in HBM: use an "
        "accelerator with more memory, a shorter sequence or switches with more ports."
    ),
    "deadline-missed": gettext_noop("The plan takes %(days)s, more than the %(target_days)s target."),
    "over-budget": gettext_noop(
        "Both buying (%(capex)s) and renting (%(cloud)s) exceed the budget of %(budget)s."
    ),
    "fixed-layout-does-not-fit": gettext_noop(
        "The fixed layout (%(fixed)s) needs %(total_gb)s GB per card (%(model_states_gb)s GB of model states; largest: "
        "%(largest_term)s %(largest_gb)s GB), %(overflow_gb)s GB more than the %(hbm_gb)s GB of HBM. "
        "Nearest accepted layouts: %(suggestions)s."
    ),
    "stack-assumed": gettext_noop("Step time assumes the %(stack)s software stack."),
    "step-time-by-domain": gettext_noop(
        "The supernodes train %(ratio)s as fast as the nodes (step %(supernode_step_time_s)s against "
        "%(nodes_step_time_s)s). The chip alone, as %(node_cards)s-card domains, gives %(chip_factor)s "
        "(TP=%(node_tp)s, EP=%(node_ep)s, PP=%(node_pp)s); the %(domain_cards)s-card domain gives the other "
        "%(domain_factor)s by keeping TP=%(tp)s and EP=%(ep)s (PP=%(pp)s) on the scale-up links."
    ),
    "layout-search-timed-out": gettext_noop(
        "The layout search stopped at its %(seconds)s-second budget after timing %(timed)s of %(feasible)s "
        "layouts that fit; the layout shown is the best of those."
    ),
    "supernode-pays": gettext_noop(
        "On %(supernodes)s x %(supernode)s, TP=%(tp)s and EP=%(ep)s run inside the %(domain_cards)s-card "
        "domain: the plan trains %(speedup)s as fast as the same cards as %(node_cards)s-card nodes "
        "(TP=%(node_tp)s, EP=%(node_ep)s, PP=%(node_pp)s; step %(step_time_s)s against %(node_step_time_s)s), "
        "for %(capex_ratio)s capex and %(power_ratio)s IT power."
    ),
    "supernode-partly-used": gettext_noop(
        "%(supernodes)s x %(supernode)s are bought whole; %(idle_cards)s of their cards stay idle in this plan."
    ),
    # suggestions
    "supernode-pays.suggestion": gettext_noop(
        "The scale-up plane pays for itself in tokens per capex dollar; keep TP and EP inside the supernode."
    ),
    "supernode-does-not-pay.suggestion": gettext_noop(
        "For this model the same cards as %(node_cards)s-card nodes give more tokens per capex dollar; the "
        "supernode pays only for models whose TP/EP traffic needs the larger domain."
    ),
    "supernode-partly-used.suggestion": gettext_noop("Plan a multiple of %(cards_per_supernode)s cards."),
    "memory-does-not-fit.zero-recompute": gettext_noop(
        "Raise the ZeRO stage (now %(zero_stage)s); turn on activation recomputation (selective, then full); raise TP inside the node; add pipeline stages across nodes; or use cards with more HBM."
    ),
    "memory-does-not-fit.zero": gettext_noop(
        "Raise the ZeRO stage (now %(zero_stage)s); raise TP inside the node; add pipeline stages across nodes; or use cards with more HBM."
    ),
    "memory-does-not-fit.recompute": gettext_noop(
        "Turn on activation recomputation (selective, then full); raise TP inside the node; add pipeline stages across nodes; or use cards with more HBM."
    ),
    "memory-does-not-fit.model-parallel": gettext_noop(
        "Raise TP inside the node; add pipeline stages across nodes; or use cards with more HBM."
    ),
    "tp-crosses-node.suggestion": gettext_noop(
        "Keep TP <= %(domain)s and move the rest of the split into pipeline stages across nodes (article 2.2: tensor parallel inside a node only)."
    ),
    "bubble-over-20pct.interleave": gettext_noop(
        "Micro-batches are already >= 4 x PP=%(pp)s: interleave the schedule (virtual_stages), use fewer pipeline stages, or balance the stages' layers."
    ),
    "bubble-over-20pct.micro-batches": gettext_noop(
        "Use %(low)s-%(high)s micro-batches per step (4-8 x PP=%(pp)s): bubble %(bubble_low)s-%(bubble_high)s; or interleave (virtual_stages) or cut PP."
    ),
    "bubble-over-20pct.raise": gettext_noop(
        "Raise the number of micro-batches to 4-8 x the pipeline stages."
    ),
    "comm-wait-over-30pct.dp_comm": gettext_noop(
        "Send BF16 gradients, fuse small gradients into large buckets, overlap the all-reduce with backward, use hierarchical all-reduce, and a 1:1 fabric (article 2.1, 3.2)."
    ),
    "comm-wait-over-30pct.tp_comm": gettext_noop(
        "Keep TP inside the HCCS/NVLink domain and lower TP if the model fits (article 2.2)."
    ),
    "comm-wait-over-30pct.pp_comm": gettext_noop(
        "Use fewer pipeline stages or place adjacent stages on nearby nodes (article 4.5)."
    ),
    "comm-wait-over-30pct.ep_comm": gettext_noop(
        "Keep expert parallelism inside the node and replicate experts with DP (article 2.4)."
    ),
    "oversubscribed-fabric-dp.suggestion": gettext_noop(
        "Build the compute fabric 1:1 (the article's recommendation; 1.5:1-2:1 only on a budget), or place each DP group under one leaf / rail and use hierarchical all-reduce."
    ),
    "flat-network-too-large.suggestion": gettext_noop(
        "Use a two-tier leaf-spine (Clos) fabric, 1:1, rail-optimized where the servers have one NIC per card."
    ),
    "zero3-unneeded.suggestion": gettext_noop(
        "Use ZeRO stage 2 (article 7.1: stage 3 only when the model does not fit)."
    ),
    "fp32-precision.suggestion": gettext_noop(
        "Train in BF16 mixed precision (FP32 master weights in the optimizer); BF16 keeps FP32's range (article 4.4, 7.1)."
    ),
    "hccl-buffer.suggestion": gettext_noop(
        "Start with export HCCL_BUFFSIZE=%(start_mb)s (MB) and tune one variable at a time."
    ),
    "ep-crosses-node.suggestion": gettext_noop(
        "Keep EP inside the node where the experts fit, or budget NIC bandwidth for the all-to-all and pair EP with DP so each expert has replicas (article 2.4, 3.3)."
    ),
    "mfu-optimistic.suggestion": gettext_noop(
        "Plan with 35-50%% MFU, or leave efficiency.mfu out and let the layout model predict it."
    ),
    # starting configuration: reasons
    "start.precision.bf16": gettext_noop(
        "BF16 has FP32's dynamic range, so it is more stable than FP16, and it halves memory against FP32 (article 4.4, 7.1)."
    ),
    "start.precision.fp8": gettext_noop(
        "FP8 as requested; keep BF16/FP32 master weights (article 7.1 starts from BF16)."
    ),
    "start.recompute.none": gettext_noop(
        "The chosen layout fits in HBM without recomputation, so none is fastest (article 5.4)."
    ),
    "start.recompute.selective": gettext_noop(
        "Recomputation costs a little compute and roughly doubles the batch that fits (article 5.4); selective keeps 34·s·b·h/t bytes per layer (Korthikanti et al. 2022)."
    ),
    "start.recompute.partial": gettext_noop(
        "Block recompute of the fewest whole layers per stage that fit in HBM: less recompute than full, and the chosen layout needs it to fit (Megatron --recompute-num-layers)."
    ),
    "start.recompute.full": gettext_noop(
        "Only full recomputation makes the chosen layout fit in HBM; it costs about one extra forward pass (article 5.4)."
    ),
    "start.recompute.does-not-fit": gettext_noop(
        "No layout fits yet: start from full recomputation, then raise the ZeRO stage or the model parallelism (article 5.4, 7.1)."
    ),
    "start.layout": gettext_noop(
        "TP (and EP) inside the node over HCCS/NVLink, PP and DP across nodes over RoCE/IB (article 2.5)."
    ),
    "start.micro_batches.no-pipeline": gettext_noop(
        "No pipeline, so micro-batches only set gradient accumulation."
    ),
    "start.micro_batches.range": gettext_noop(
        "4-8 x the %(pp)s pipeline stages: bubble (P-1)/(M+P-1) = %(bubble_low)s at %(low)s, %(bubble_high)s at %(high)s (article 2.3)."
    ),
    "start.micro_batches.chosen": gettext_noop(
        "4-8 x the %(pp)s pipeline stages: bubble (P-1)/(M+P-1) = %(bubble_low)s at %(low)s, %(bubble_high)s at %(high)s (article 2.3). The chosen layout runs %(micro_batches)s (bubble %(bubble)s)."
    ),
    "start.gradient_compression": gettext_noop(
        "All-reduce BF16 gradients: half the bytes of FP32 (article 2.1, 7.1)."
    ),
    "start.gradient_fusion": gettext_noop(
        "Fuse small gradients into large buckets and overlap the all-reduce with backward (article 2.1; Megatron --overlap-grad-reduce, DeepSpeed overlap_comm)."
    ),
    "start.zero_stage.3": gettext_noop(
        "The model does not fit with stage 2, so shard the weights too (article 7.1)."
    ),
    "start.zero_stage.chosen-low": gettext_noop(
        "The chosen layout fits with the optimizer state sharded (stage 1, Megatron's distributed optimizer) or not at all (stage 0), and moves less data than stage 2; with pipeline parallelism DeepSpeed supports only stage 1 (deepspeedai/DeepSpeed#823)."
    ),
    "start.zero_stage.pipeline": gettext_noop(
        "Stage 2 is the article's default, but with pipeline parallelism DeepSpeed supports only stage 1 (deepspeedai/DeepSpeed#823, #1629); Megatron's distributed optimizer is the stage-1 equivalent."
    ),
    "start.zero_stage.2": gettext_noop(
        "Shard optimizer state and gradients; stage 3 only when the model does not fit (article 7.1)."
    ),
    "start.expert_parallel": gettext_noop(
        "--expert-model-parallel-size %(ep)s --expert-tensor-parallel-size %(expert_tp)s: the MoE layers regroup the stage's TP x CP x DP ranks (Megatron-Core parallel folding)."
    ),
    "start.pipeline_split": gettext_noop(
        "Uneven pipeline split: the first and last devices also hold the embedding and the loss (Megatron-Core --pipeline-model-parallel-layout, or --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split)."
    ),
    "start.hccl_buffsize": gettext_noop(
        "MB; CANN default 200. The article measured 256 MB ~15%% faster than 64 MB on 8-card DP and no gain above (article 4.3; not 10-20%% of HBM)."
    ),
    "start.hccl_connect_timeout": gettext_noop(
        "Seconds, range 120-7200 (CANN default 120); raise it for many nodes so rank start-up skew does not fail initialisation (article 4.3, 5.2)."
    ),
    "start.hccl_deterministic": gettext_noop(
        "true makes reductions reproducible at some speed cost: use it for debugging only (article 4.3)."
    ),
    "start.cuda_device_max_connections": gettext_noop(
        "Megatron-LM requires it with sequence parallelism so TP communication overlaps compute in order."
    ),
    "start.nccl_buffsize": gettext_noop(
        "The article's 256 MB figure is for HCCL on Ascend; NCCL's default is sound."
    ),
    # starting configuration: worded values
    "start.value.as-needed": gettext_noop("as needed for the global batch"),
    "start.value.fp8-master": gettext_noop("FP8 (BF16 master copy)"),
    "start.value.bf16-gradients": gettext_noop("BF16 gradients"),
    "start.value.fusion-on": gettext_noop("on, overlapped with backward"),
    "start.value.nccl-default": gettext_noop("default (4 MiB)"),
    # assumptions
    "assumption.peak": gettext_noop("%(accelerator)s dense %(precision)s peak"),
    "assumption.hbm": gettext_noop("HBM per card"),
    "assumption.matmul-efficiency": gettext_noop("achievable matmul efficiency"),
    "assumption.mfu": gettext_noop("MFU"),
    "assumption.stack": gettext_noop("software stack"),
    "assumption.stack-default": gettext_noop("software stack (default for this accelerator)"),
    "assumption.tdp": gettext_noop("card TDP"),
    "assumption.server-price": gettext_noop("server price (cards included)"),
    "assumption.switch-price": gettext_noop("switch price"),
    "assumption.transceiver-price": gettext_noop("transceiver price"),
    "assumption.cloud-price": gettext_noop("cloud price per card-hour"),
    "assumption.electricity": gettext_noop("electricity"),
    "assumption.pue": gettext_noop("PUE"),
    "assumption.depreciation": gettext_noop("depreciation"),
    "assumption.failure-rate-card": gettext_noop("interruptions per card-hour (%(causes)s)"),
    "assumption.failure-rate-node": gettext_noop("interruptions per server-hour (%(causes)s)"),
    "assumption.failure-rate-switch": gettext_noop("interruptions per switch-hour (%(causes)s)"),
    "assumption.detection": gettext_noop("time to detect an interruption"),
    "assumption.rescheduling": gettext_noop("time to reschedule after an interruption"),
    "assumption.price-book": gettext_noop("Price book: %(book)s v%(version)s (%(date)s, %(currency)s)"),
    "source.scenario": gettext_noop("scenario input"),
    "source.catalog-or-scenario": gettext_noop("catalog defaults / scenario"),
    "source.mfu-given": gettext_noop("scenario efficiency.mfu"),
    "source.mfu-predicted": gettext_noop("layout model prediction"),
    # --- diagnose a measured run (estimator.plan.diagnose) ---
    "diagnose.network": gettext_noop(
        "Communication wait is %(share)s of the step, above %(threshold)s: suspect the network first (article section 5.1). "
        "The model expects %(model_s)s of exposed communication for this layout at the links' rated bandwidth; the run waits "
        "%(measured_s)s. Test each NIC's bandwidth point to point, check ECMP/rail routing, PFC pause frames, NUMA binding of "
        "the NICs and the HCCL/NCCL topology settings."
    ),
    "diagnose.communication-slower": gettext_noop(
        "Communication wait is %(share)s of the step, %(times_model)s the model's %(model_s)s, though below the %(threshold)s "
        "the article treats as a network fault."
    ),
    "diagnose.data-loading": gettext_noop(
        "Data loading takes %(share)s of the step; the model assumes the loader's prefetch hides it. Tokenise and shuffle "
        "offline and prefetch to local NVMe (article section 3.4)."
    ),
    "diagnose.compute-slower": gettext_noop(
        "Compute takes %(times_model)s the model's %(model_s)s: check that the operators run their high-performance kernels "
        "(article section 5.1), the clocks and power caps, and the FP8 recipe."
    ),
    "diagnose.compute-faster": gettext_noop(
        "Compute takes %(times_model)s the model's %(model_s)s: the stack is faster than the model assumes; plan with this "
        "run as calibration.pilot."
    ),
    "diagnose.bubble": gettext_noop(
        "The pipeline bubble is %(share)s of the modelled step (PP=%(pp)s, %(micro_batches)s micro-batches): 4 to 8 "
        "micro-batches per stage keep it small (article section 2.3), or interleave stages."
    ),
    "diagnose.memory-pressure": gettext_noop(
        "The layout needs %(share)s of the cards' HBM: allocator retries and fragmentation slow steps near the limit; "
        "recompute activations or shard more with ZeRO (article section 5.4)."
    ),
    "diagnose.unexplained": gettext_noop(
        "%(measured_s)s of the step is neither compute, communication nor data loading (the model expects %(model_s)s of "
        "bubble and overlap): host stalls, stragglers or synchronisation; read the logs of the slowest rank (article section 7.3)."
    ),
    "diagnose.matches": gettext_noop(
        "The run matches the model within its tolerance (step %(times_model)s the model's %(model_s)s); nothing stands out."
    ),
}
MESSAGES.update(field_messages.FIELD_MESSAGES)  # the core's field errors (range, JSON)

# Sentences that count something: code -> (the counted param, the sentence in its singular and
# plural forms); render chooses the form with ngettext by the count as shown (zh_Hans has one form).
PLURALS: dict[str, tuple[str, Any]] = {
    "no-feasible-layout": (
        "cards",
        ngettext_lazy(
            "No parallel layout fits in HBM on %(cards)s card. Add cards, use a larger-memory accelerator or a shorter sequence.",
            "No parallel layout fits in HBM on %(cards)s cards. Add cards, use a larger-memory accelerator or a shorter sequence.",
            "n",
        ),
    ),
    "budget-cards-hold-no-layout": (
        "cards",
        ngettext_lazy(
            "No parallel layout fits in HBM on the %(cards)s card the budget buys. Raise the budget, use a larger-memory accelerator or a shorter sequence.",
            "No parallel layout fits in HBM on the %(cards)s cards the budget buys. Raise the budget, use a larger-memory accelerator or a shorter sequence.",
            "n",
        ),
    ),
    "no-possible-layout": (
        "cards",
        ngettext_lazy(
            "No parallel layout is possible on %(cards)s card with the fixed fields (%(fixed)s): %(reasons)s. Nearest accepted layouts: %(suggestions)s.",
            "No parallel layout is possible on %(cards)s cards with the fixed fields (%(fixed)s): %(reasons)s. Nearest accepted layouts: %(suggestions)s.",
            "n",
        ),
    ),
    "budget-buys-no-cluster": (
        "cards",
        ngettext_lazy(
            "The budget of %(budget)s does not buy the smallest cluster: %(cards)s card for %(capex)s.",
            "The budget of %(budget)s does not buy the smallest cluster: %(cards)s cards for %(capex)s.",
            "n",
        ),
    ),
    "config-missing-fields": (
        "count",
        ngettext_lazy(
            "model config is missing the required field %(fields)s",
            "model config is missing the required fields %(fields)s",
            "n",
        ),
    ),
    "config-fields-ignored": (
        "count",
        ngettext_lazy(
            "%(count)s config.json field the estimator does not read was ignored: %(fields)s.",
            "%(count)s config.json fields the estimator does not read were ignored: %(fields)s.",
            "n",
        ),
    ),
}

SEVERITIES = {
    "error": gettext_lazy("error"),
    "warning": gettext_lazy("warning"),
    "info": gettext_lazy("info"),
}

# parameter name -> formatting kind (reports.formatting); names not listed are shown as they are
# The layout rules a refused plan names (estimator.plan.refusal.RULES, the English defaults).
RULES = {
    "tp-crosses-scaleup-domain": gettext_noop("TP must stay inside one scale-up (NVLink/HCCS) domain"),
    "tp-not-dividing-heads": gettext_noop("TP must divide the attention heads and the KV heads"),
    "sequence-parallel-needs-tp": gettext_noop("sequence parallelism needs TP > 1"),
    "cp-not-dividing-sequence": gettext_noop("CP must divide the sequence length"),
    "pp-not-dividing-layers": gettext_noop("PP x virtual stages cannot exceed the layers"),
    "virtual-stages-need-pp": gettext_noop("interleaved (virtual) stages need PP > 1"),
    "stage-layers-not-splitting": gettext_noop(
        "the pipeline devices without a fixed first/last layer count must share the other layers evenly"
    ),
    "virtual-stages-not-dividing-layers": gettext_noop(
        "PP x virtual stages must split the layers evenly (at most 2 short), or fix parallelism.first_stage_layers / last_stage_layers"
    ),
    "dp-not-integral": gettext_noop("TP x PP x CP must divide the cards"),
    "dp-not-matching-cards": gettext_noop("TP x PP x CP x DP must equal the cards"),
    "ep-without-experts": gettext_noop("expert parallelism needs a mixture-of-experts model"),
    "ep-not-dividing-experts": gettext_noop("EP must divide the experts"),
    "expert-tp-crosses-scaleup-domain": gettext_noop(
        "expert TP must stay inside one scale-up (NVLink/HCCS) domain"
    ),
    "ep-not-folding-into-tp-cp-dp": gettext_noop(
        "EP x expert TP must divide TP x CP x DP (the ranks the MoE layers regroup)"
    ),
    "batch-off-by-over-25pct": gettext_noop(
        "the global batch must split into whole micro-batches per DP rank (within 25 %)"
    ),
    "micro-batches-not-multiple-of-pp": gettext_noop(
        "with interleaving the micro-batches must be a multiple of PP"
    ),
    "zero-stage-incompatible-with-pp": gettext_noop(
        "ZeRO-2/3 does not combine with pipeline parallelism on this stack"
    ),
    "partial-recompute-redundant": gettext_noop("partial recompute must recompute some but not all layers"),
    "out-of-memory": gettext_noop("the layout must fit in HBM"),
}

PARAM_KINDS = {
    "limit": "bound",
    "detail": "json_detail",
    "days_saved": "days",
    "causes": "causes",
    "cost": "money",
    "lever": "lever",
    "threshold": "percent0",
    "measured_s": "seconds",
    "model_s": "seconds",
    "times_model": "times",
    "params": "big",
    "fixed": "layout",
    "reasons": "rules",
    "suggestions": "layouts",
    "total_bytes": "bytes",
    "hbm_bytes": "bytes",
    "bubble": "percent0",
    "bubble_low": "percent0",
    "bubble_high": "percent0",
    "share": "percent0",
    "mfu": "percent0",
    "ratio": "ratio",
    "days": "days",
    "target_days": "days",
    "capex": "money",
    "cloud": "money",
    "budget": "money",
    "largest": "term",
    "tp": "count",
    "pp": "count",
    "dp": "count",
    "ep": "count",
    "domain": "count",
    "nodes": "count",
    "cards": "count",
    "max_cards": "count",
    "heads": "count",
    "layers": "count",
    "experts": "count",
    "product": "count",
    "tokens": "big",
    "low": "count",
    "high": "count",
    "micro_batches": "count",
    "total_gb": "gb",
    "hbm_gb": "gb",
    "overflow_gb": "gb",
    "timed": "count",
    "feasible": "count",
    "model_states_gb": "gb",
    "largest_gb": "gb",
    "largest_term": "memory_term",
    "speedup": "times",
    "chip_factor": "times",
    "domain_factor": "times",
    "supernode_step_time_s": "seconds",
    "nodes_step_time_s": "seconds",
    "node_tp": "count",
    "node_ep": "count",
    "node_pp": "count",
    "capex_ratio": "change",
    "power_ratio": "change",
    "step_time_s": "seconds",
    "node_step_time_s": "seconds",
    "supernodes": "count",
    "idle_cards": "count",
    "cards_per_supernode": "count",
    "domain_cards": "count",
    "node_cards": "count",
    "nearest_layout": "layout",
    "precision": "upper",
}


def _param(name: str, value: Any, currency: str) -> str:
    kind = PARAM_KINDS.get(name)
    if value is None and kind != "layout":
        return f.DASH
    if kind == "percent0":
        return f.percent(value, 0)
    if kind == "money":
        return f.money(value, currency)
    if kind == "term":
        return labels.step_term(value)
    if kind == "causes":
        return labels.failure_causes(value)
    if kind == "lever":
        return labels.goodput_lever(value)
    if kind == "json_detail":
        return field_messages.json_detail(value)
    if kind == "memory_term":
        return labels.memory_term(value)
    if kind == "times":
        return f"{f.number(value, 2)}×"
    if kind == "change":
        text = f.percent(value - 1, 0)
        return text if value < 1 else f"+{text}"
    if kind == "upper":
        return str(value).upper()  # bf16 -> BF16, as the glossary writes number formats
    if kind == "gb":
        return f.number(value, 1)
    if kind == "layout":
        if not isinstance(value, dict) or not value:
            return str(_("none on these cards"))
        return ", ".join(
            f"{k.upper() if len(k) <= 2 else k} {v}" for k, v in value.items() if k != "predicted_mfu"
        )
    if kind == "layouts":  # plan.refusal's suggestions
        shown = [_param("fixed", v, currency) for v in value or [] if isinstance(v, dict)]
        return "; ".join(shown) if shown else str(_("none on these cards"))
    if kind == "rules":  # layout rule codes (layout.enumeration.REASONS) in words
        return "; ".join(str(_(RULES[c])) if c in RULES else str(c) for c in value or [])
    if kind:
        return f.by_kind(value, kind, currency)
    return str(value)


def known(code: str) -> bool:
    return code in MESSAGES or code in PLURALS


def render(code: str | None, params: dict | None, default: str = "", currency: str = "USD") -> str:
    """The sentence of `code` in the active language with its params formatted; the core's English
    `default` when the code is unknown (or a param is missing)."""
    if not code or not known(code):
        return default
    params = params if isinstance(params, dict) else {}
    values = {k: _param(k, v, params.get("currency") or currency) for k, v in params.items()}
    try:
        if code in PLURALS:
            counted, sentence = PLURALS[code]
            return str(sentence % {**values, "n": f.plural_n(values[counted])})
        return _(MESSAGES[code]) % values if "%(" in MESSAGES[code] else _(MESSAGES[code]).replace("%%", "%")
    except (KeyError, TypeError, ValueError):
        return default


SAME_MESSAGE = {"supernode-does-not-pay": "supernode-pays"}


def advice(item: dict, currency: str) -> dict:
    """An advice entry of the result -> {code, severity, severity_label, message, suggestion}."""
    if not isinstance(item, dict):
        return {"code": "", "severity": "", "severity_label": "", "message": str(item), "suggestion": ""}
    code, params = item.get("code"), item.get("params") or {}
    suggestion = item.get("suggestion_code") or code
    if suggestion == code:
        suggestion = f"{code}.suggestion"
    severity = item.get("severity") or ""
    return {
        "code": code or "",
        "severity": severity,
        "severity_label": str(SEVERITIES.get(str(severity), severity)),
        "message": render(
            item.get("message_code") or SAME_MESSAGE.get(str(code), code),
            params,
            item.get("message", ""),
            currency,
        ),
        "suggestion": render(suggestion, params, item.get("suggestion", ""), currency),
    }


def warning(item: Any, currency: str) -> dict:
    if not isinstance(item, dict):
        return {"code": "", "severity": "", "severity_label": "", "message": str(item)}
    out = advice(item, currency)
    out.pop("suggestion")
    return out


# starting-configuration values worded from their params (the core's text is English)
WORDED_VALUES = {
    "expert_parallel": gettext_noop("EP %(ep)s × expert TP %(expert_tp)s (expert DP %(expert_dp)s)"),
    "pipeline_split": gettext_noop("first %(first)s / last %(last)s layers (others %(middle)s)"),
}


def layout_value(p: dict) -> str:
    """The starting configuration's layout row (its params: tp, pp, virtual_stages, dp, ep, cp,
    micro_batch_size, sequence_parallel) in the reader's language."""
    pp = f"PP {p.get('pp')}"
    if (p.get("virtual_stages") or 1) > 1:
        pp += " (" + _("%(v)s virtual stages per rank, interleaved 1F1B") % {"v": p["virtual_stages"]} + ")"
    parts = [f"TP {p.get('tp')}", pp, f"DP {p.get('dp')}"]
    parts += [f"{k.upper()} {p[k]}" for k in ("ep", "cp") if (p.get(k) or 1) > 1]
    text = " × ".join(parts)
    if p.get("micro_batch_size") is not None:
        text += ", " + _("micro-batch %(n)s") % {"n": p["micro_batch_size"]}
    if p.get("sequence_parallel"):
        text += ", " + _("sequence parallel")
    return text


def setting(row: Any, currency: str) -> dict:
    """A starting-configuration row: the value in words where it has a value_code, the reason translated."""
    if not isinstance(row, dict):
        return {"setting": "", "value": "", "reason": str(row)}
    value = row.get("value")
    key = str(row.get("setting", ""))
    if row.get("value_code"):
        value = render(row["value_code"], {}, str(value), currency)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        value = f.count(value)
    elif key == "layout" and isinstance(row.get("params"), dict) and row["params"].get("tp"):
        value = layout_value(row["params"])
    elif key in WORDED_VALUES and isinstance(row.get("params"), dict):
        with contextlib.suppress(KeyError, TypeError, ValueError):  # other params: the core's text
            value = _(WORDED_VALUES[key]) % row["params"]
    elif key in labels.SETTINGS:
        value = labels.setting_value(value)
    return {
        "setting": labels.setting(key),
        "typed": key not in labels.SETTINGS,  # an environment variable: name and value as typed
        "value": value,
        "reason": render(row.get("code"), row.get("params"), row.get("reason", ""), currency),
    }


UNITS = {
    "years": gettext_lazy("years"),
    "s": gettext_lazy("seconds"),
    "per card-hour": gettext_lazy("per card-hour"),
    "per node-hour": gettext_lazy("per node-hour"),
    "per switch-hour": gettext_lazy("per switch-hour"),
}


def assumption(row: Any, currency: str) -> dict:
    if not isinstance(row, dict):
        return {"name": str(row), "value": "", "value_text": "", "unit": "", "source": ""}
    unit = row.get("unit", "")
    value = row.get("value")
    shown = {"FLOP/s": f.flop_per_s, "B": f.bytes_, "W": f.watts}.get(unit)
    return {
        "name": render(row.get("code"), row.get("params"), row.get("name", ""), currency),
        "value": value,
        "value_text": shown(value) if shown else f.auto(value),
        "unit": "" if shown else str(UNITS.get(unit, unit)),
        "source": render(row.get("source_code"), {}, row.get("source", ""), currency),
        "cited": not known(str(row.get("source_code") or "")),  # a publication, quoted as published
    }


# --- the core's field errors (reports.field_messages) ----------------------------------------
def scenario_error(err: Any) -> str:
    """A core FieldError in the reader's language: a refusal by its code and params (plan.refusal),
    any other by its sentence (field_error)."""
    code = getattr(err, "code", "")
    if code and known(code):
        return render(code, getattr(err, "params", None), err.message)
    return field_error(err.message)


def field_error(message: str) -> str:
    """One of the core's field-error sentences that came without a code (a sweep row's) in the
    reader's language, by the code it maps onto; other sentences are returned as they are."""
    for pattern, code in field_messages.SENTENCES:
        match = pattern.match(message or "")
        if match:
            params: dict[str, Any] = {}
            if match.groups():
                params["limit"] = match.group(1)
                with contextlib.suppress(ValueError):
                    params["limit"] = float(match.group(1))
            return render(code, params, message)
    return message


# English sentences the core returns without a code (sweep rows), translated when known.
SENTENCES = {
    gettext_noop("no plan: the fixed layout does not divide the cards, or the fabric is too large"),
    gettext_noop("no plan: no parallel layout passes the rules and fits in HBM on these cards"),
    gettext_noop("no plan: the run never finishes, its interruptions cost more than the time between them"),
    gettext_noop("no plan: the deadline needs more cards than the largest cluster this network can build"),
}


def sentence(text: str) -> str:
    return _(text) if text in SENTENCES else text
