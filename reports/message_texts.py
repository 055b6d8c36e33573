"""The words of the message catalogue (reports.messages renders them): each code the core returns
with its English msgid marked for gettext (MESSAGES; translations in locale/*/LC_MESSAGES/django.po).
The sentences that count something, in their singular and plural forms, are reports.plural_texts."""

from __future__ import annotations

from django.utils.translation import gettext_noop

from . import field_messages

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
        "Checkpoints take %(share)s of the %(days)s on average; %(lever)s would save %(days_saved)s (cost: %(cost)s)."
    ),
    "goodput-checkpoints.suggestion": gettext_noop("Switch on %(lever)s."),
    "goodput-restarts": gettext_noop(
        "Restarts and re-done work take %(share)s of the %(days)s on average; %(lever)s would save %(days_saved)s "
        "(cost: %(cost)s)."
    ),
    "goodput-restarts.suggestion": gettext_noop("Switch on %(lever)s."),
    "goodput-checkpoints.free": gettext_noop(
        "Checkpoints take %(share)s of the %(days)s on average; %(lever)s would save %(days_saved)s with no new hardware."
    ),
    "goodput-restarts.free": gettext_noop(
        "Restarts and re-done work take %(share)s of the %(days)s on average; %(lever)s would save %(days_saved)s "
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
    # a pilot the calibration refuses (estimator.plan.calibration)
    "pilot-step-above-peak": gettext_noop(
        "the pilot's step (%(measured_s)s) would need its GEMMs above the chip's peak (fastest possible "
        "%(model_s)s for this layout); check the figure and its unit"
    ),
    "pilot-step-too-slow": gettext_noop(
        "the pilot's step (%(measured_s)s) is slower than the model allows even at %(share)s compute "
        "efficiency (%(model_s)s); check the figure and its unit"
    ),
    "pilot-with-given-mfu": gettext_noop(
        "give either efficiency.mfu or calibration.pilot: the pilot calibrates the predicted MFU"
    ),
    "pilot-moe-target-dense": gettext_noop(
        "the pilot is a mixture-of-experts model and the target a dense one: a factor measured on "
        "one does not carry to the other; run the pilot on a model of the target's kind"
    ),
    "pilot-dense-target-moe": gettext_noop(
        "the pilot is a dense model and the target a mixture-of-experts one: a factor measured on "
        "one does not carry to the other; run the pilot on a model of the target's kind"
    ),
    "pilot-layout-does-not-fit": gettext_noop(
        "no layout of the pilot fits in the cards' memory; check the pilot's layout"
    ),
    "pilot-no-exposed-comm": gettext_noop(
        "the pilot's layout exposes no communication in the model (everything overlaps or stays "
        "on one card), so a wait share cannot calibrate the links; leave it out"
    ),
    "pilot-comm-share-outside": gettext_noop(
        "a communication wait of %(share)s is outside what this layout can show (%(lowest_share)s "
        "with links at their rated bandwidth to %(highest_share)s at %(links)s of the model's); "
        "check the profiler's figure"
    ),
    "pilot-above-peak": gettext_noop(
        "%(tokens)s tokens/s per card is %(mfu)s of the chip's peak for this model: above peak, which no "
        "run can reach; check the figure and its unit"
    ),
    "pilot-far-below-model": gettext_noop(
        "%(tokens)s tokens/s per card is %(times_model)s what the model predicts for this pilot "
        "(%(predicted)s); no validated published run is below %(speedup)s, so this one is refused "
        "(a stalled job, data loading, or another unit?)"
    ),
    "measured-step-above-peak": gettext_noop(
        "a step of %(measured_s)s would run the chips above their peak (at peak the batch takes "
        "%(model_s)s); check the figure and its unit"
    ),
    "server-not-for-accelerator": gettext_noop(
        "a %(server)s holds %(holds)s cards, not %(accelerator)s; choose a server for it: %(servers)s"
    ),
    "fixed-tp-kv-heads": gettext_noop("must divide the %(heads)s KV heads"),
    "fixed-pp-layers": gettext_noop("cannot exceed the %(layers)s layers"),
    "fixed-ep-dense": gettext_noop("expert parallelism needs a mixture-of-experts model"),
    "fixed-ep-experts": gettext_noop("must divide the %(experts)s experts"),
    "fixed-virtual-stages-pp": gettext_noop("interleaving needs parallelism.pp > 1"),
    "fixed-dp-cards": gettext_noop("%(names)s = %(product)s must equal cluster.cards = %(cards)s"),
    "fixed-layout-cards": gettext_noop("%(names)s = %(product)s must divide cluster.cards = %(cards)s"),
    # estimator.plan.pilot: the same checks against the pilot's own cards
    "pilot-dp-cards": gettext_noop("%(names)s = %(product)s must equal calibration.pilot.cards = %(cards)s"),
    "pilot-layout-cards": gettext_noop(
        "%(names)s = %(product)s must divide calibration.pilot.cards = %(cards)s"
    ),
    "fixed-expert-tp-dense": gettext_noop("expert tensor parallelism needs a mixture-of-experts model"),
    "fixed-stage-layers": gettext_noop(
        "the first and last pipeline stages hold more than the %(layers)s layers"
    ),
    "deadline-needs-too-many-cards": gettext_noop(
        "Training %(tokens)s tokens in %(target_days)s needs at least %(cards)s cards even at an MFU of %(mfu)s, more than "
        "the %(max_cards)s cards of the largest cluster this network can build. Allow more days, train fewer "
        "tokens or use switches with more ports."
    ),
    "no-cluster-holds-the-model": gettext_noop(
        "No cluster this network can build (up to %(max_cards)s cards) holds the model in HBM: use an "
        "accelerator with more memory, a shorter sequence or switches with more ports."
    ),
    "deadline-missed": gettext_noop(
        "No cluster size meets the %(target_days)s target: the plan keeps the fastest the sizing found, "
        "%(cards)s cards in %(days)s. Allow more days, train fewer tokens, raise the global batch (more "
        "cards help only while each replica keeps enough micro-batches) or lose less time to "
        "interruptions (faster restarts, in-memory checkpoints)."
    ),
    "deadline-missed.mfu-given": gettext_noop(
        "No cluster size meets the %(target_days)s target: the plan keeps the fastest the sizing found, "
        "%(cards)s cards in %(days)s. Allow more days, train fewer tokens or lose less time to "
        "interruptions (faster restarts, in-memory checkpoints)."
    ),
    "two-checkpoint-intervals": gettext_noop(
        "The storage section's checkpoint interval (%(storage)s s) and the reliability section's "
        "(%(reliability)s s) are the same interval: give one of them."
    ),
    "budget-fastest-not-most": gettext_noop(
        "The budget buys up to %(most_cards)s cards, but fewer train faster: the plan takes the %(cards)s "
        "cards that train fastest of the sizes it buys."
    ),
    # estimator.plan.sections.warnings._confidence_missed; the web text names no field path
    "deadline-likely-missed": gettext_noop(
        "Sized at the planned MFU the plan meets the %(target_days)s target, but it misses it with a "
        "%(probability)s chance (the MFU range counted, and the interruptions where failures are). To size "
        "for the chance of meeting it, give a chance of meeting the deadline (for example 90%%)."
    ),
    "deadline-confidence-missed": gettext_noop(
        "No cluster size reaches a %(confidence)s chance of meeting the %(target_days)s target: the plan "
        "keeps %(cards)s cards, %(days)s with a %(probability)s chance of missing it (the fastest the "
        "sizing found). Ask for a smaller chance of "
        "meeting the deadline, allow more days, train fewer tokens or lose less time to interruptions "
        "(faster restarts, in-memory checkpoints)."
    ),
    "global-batch-rounded": gettext_noop(
        "The chosen layout trains with a global batch of %(sequences)s sequences (%(tokens)s tokens), not the %(asked_sequences)s asked (%(asked_tokens)s tokens, %(batch_ratio)s): DP %(dp)s x %(micro_batches)s micro-batches of %(micro_batch_size)s. To keep the batch, ask for a multiple of DP x micro-batch x sequence length or fix the DP size."
    ),
    "partial-node-slow": gettext_noop(
        "%(cards)s cards leave the last of %(nodes)s servers part-used and split poorly (MFU %(mfu)s, "
        "%(days)s before failures); the %(whole)s cards of those servers would train at MFU "
        "%(whole_mfu)s in %(whole_days)s, for the same capex."
    ),
    "partial-supernode-slow": gettext_noop(
        "%(cards)s cards leave %(idle_cards)s of the %(whole)s cards of %(supernodes)s x %(supernode)s idle "
        "(MFU %(mfu)s, %(days)s before failures); the supernodes are bought whole, and all %(whole)s of "
        "their cards would train at MFU %(whole_mfu)s in %(whole_days)s."
    ),
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
        "(TP=%(node_tp)s, EP=%(node_ep)s, PP=%(node_pp)s; a step of %(sequences)s sequences in %(step_time_s)s "
        "against %(node_sequences)s in %(node_step_time_s)s), "
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
    "bubble-over-20pct.global-batch": gettext_noop(
        "The global batch of %(global_batch_tokens)s tokens a step over DP=%(dp)s at micro-batch 1 fixes %(micro_batches)s micro-batches: %(low)s-%(high)s need %(batch_low_tokens)s-%(batch_high_tokens)s tokens a step (training.global_batch_tokens), a training choice (Llama 3 405B used at most %(reference_batch_tokens)s on 16K H100); or fewer cards (fewer DP ranks), interleave (virtual_stages) or cut PP."
    ),
    "bubble-over-20pct.global-batch-planned": gettext_noop(
        "The global batch of %(global_batch_tokens)s tokens a step over DP=%(dp)s at micro-batch 1 fixes %(micro_batches)s micro-batches: %(low)s-%(high)s need %(batch_low_tokens)s-%(batch_high_tokens)s tokens a step (training.global_batch_tokens), a training choice (Llama 3 405B used at most %(reference_batch_tokens)s on 16K H100); or fewer cards (fewer DP ranks), interleave (virtual_stages) or cut PP. A re-plan of these cards at %(batch_low_tokens)s tokens a step: %(batch_days)s."
    ),
    "fewer-cards-faster": gettext_noop(
        "%(faster_cards)s cards would finish sooner than these %(cards)s: %(faster_days)s against %(days)s; the global batch of %(global_batch_tokens)s tokens a step gives each of the DP=%(dp)s ranks only %(micro_batches)s micro-batches for PP=%(pp)s."
    ),
    "fewer-cards-faster.suggestion": gettext_noop(
        "Plan on %(faster_cards)s cards (PP=%(faster_pp)s x DP=%(faster_dp)s, %(faster_micro_batches)s micro-batches per rank), or raise the global batch (training.global_batch_tokens) if the training allows it."
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
        "4-8 x the %(pp)s pipeline stages: bubble (P-1)/(M+P-1) = %(bubble_low)s at %(low)s, %(bubble_high)s at %(high)s (article 2.3). The chosen layout runs %(micro_batches)s (bubble %(layout_bubble)s)."
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
    "start.zero_stage.3-faster": gettext_noop(
        "Stage 2 fits too, but only with more recomputation or smaller micro-batches: the same layout with stage 2 trains %(slower_by)s slower, so shard the weights too."
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
    "assumption.flop-count": gettext_noop(
        "FLOPs per token behind the MFU: 6·N_active + 12·L·s·d_attn, the whole attention matrix; "
        "counting the causal half the kernels compute, the MFU is %(causal_mfu)s"
    ),
    "assumption.flop-count-6n": gettext_noop(
        "FLOPs per token behind the MFU: 6·N_active, attention not counted"
    ),
    "assumption.stack": gettext_noop("software stack"),
    "assumption.stack-default": gettext_noop("software stack (default for this accelerator)"),
    "assumption.tdp": gettext_noop("card TDP"),
    "assumption.moe-imbalance": gettext_noop(
        "MoE load imbalance (max/mean routed tokens per expert-parallel rank)"
    ),
    "assumption.seq-len": gettext_noop("sequence length (tokens a sample)"),
    "assumption.global-batch": gettext_noop("global batch (tokens a step, asked)"),
    "assumption.server-price": gettext_noop("server price (cards included)"),
    "assumption.switch-price": gettext_noop("switch price"),
    "assumption.transceiver-price": gettext_noop("transceiver price"),
    "assumption.cloud-price": gettext_noop("cloud price per card-hour"),
    "assumption.electricity": gettext_noop("electricity"),
    "assumption.pue": gettext_noop("PUE"),
    "assumption.depreciation": gettext_noop("depreciation"),
    "assumption.mfu-spread": gettext_noop("MFU range assumed around the given MFU (relative half-width)"),
    "assumption.utilization": gettext_noop("fleet utilization (owned hours doing paid work)"),
    "assumption.exchange-rate": gettext_noop("exchange rate"),
    "assumption.failure-rate-card": gettext_noop("interruptions per card-hour (%(causes)s)"),
    "assumption.failure-rate-node": gettext_noop("interruptions per server-hour (%(causes)s)"),
    "assumption.failure-rate-switch": gettext_noop("interruptions per switch-hour (%(causes)s)"),
    "assumption.detection": gettext_noop("time to detect an interruption"),
    "assumption.rescheduling": gettext_noop("time to reschedule after an interruption"),
    "assumption.held-time": gettext_noop(
        "time the run is paid for, over its computing time (energy at the training draw throughout)"
    ),
    "assumption.price-book": gettext_noop("Price book: %(book)s v%(version)s (%(date)s, %(currency)s)"),
    "source.scenario": gettext_noop("scenario input"),
    "source.catalog-or-scenario": gettext_noop("catalog defaults / scenario"),
    "source.mfu-given": gettext_noop("scenario efficiency.mfu"),
    "source.mfu-predicted": gettext_noop("layout model prediction"),
    "source.mfu-spread-assumed": gettext_noop(
        "assumption, not evidence: +-25 %% around a given MFU without efficiency.mfu_range "
        "(plan.mfu_range.ASSUMED_MFU_SPREAD) [U]"
    ),
    "source.moe-imbalance-default": gettext_noop(
        "default: auxiliary-loss-free balancing in production (training.moe_imbalance; 1.0 for force-balanced benchmarks) [U]"
    ),
    "source.seq-len-default": gettext_noop(
        "default: 4,096 tokens, or the assumed shape's for a model given by its size (training.seq_len) [U]"
    ),
    "source.global-batch-default": gettext_noop(
        "default: 4M tokens a step, Llama 2's (Touvron et al. 2023, section 2.2; training.global_batch_tokens) [U]"
    ),
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

# --- sweep rows without a plan ------------------------------------------------------------------
# estimator.plan.batch_reasons' codes -> the sentence of a sweep row (no params: the sweep page counts
# its rows by reason); the same English as the core's default, so a row reads the same in the API.
ROW_REASONS: dict[str, str] = {
    "deadline-needs-too-many-cards": gettext_noop(
        "no plan: the deadline needs more cards than the largest cluster this network can build"
    ),
    "no-feasible-layout": gettext_noop(
        "no plan: no parallel layout passes the rules and fits in HBM on these cards"
    ),
    "run-never-finishes": gettext_noop(
        "no plan: the run never finishes, its interruptions cost more than the time between them"
    ),
    "budget-buys-no-cluster": gettext_noop("no plan: the budget does not buy the smallest cluster"),
    "layout-or-fabric-refuses-cards": gettext_noop(
        "no plan: the fixed layout does not divide the cards, or the fabric is too large"
    ),
}
