"""The source article's rules of thumb (docs/sources.md#source-article; "article N.N" below names
its sections) as checks on a plan, and its starting configuration.

Works on the CONTRACT dicts only (the normalized scenario and the result sections of
docs/architecture.md#scenario-contract), so it is coupled to no other module's classes. A missing
or malformed key skips the rule; it never raises.

`advise(scenario, result)` -> list of AdviceItem (estimator.plan.result: code, severity, message,
suggestion, params, suggestion_code, and `message_code` where the sentence has variants); severity is "error"
(the plan cannot run), "warning" (it runs, slowly or wastefully) or "info". Codes are public API:

    memory-does-not-fit      memory.fits is false
    tp-crosses-node          TP larger than the HCCS/NVLink domain (article 2.2, 2.5)
    bubble-over-20pct        pipeline bubble > 20 % of the step; M = 4P..8P (article 2.3, errata);
                             variant global-batch where the global batch fixes M (the batch to ask)
    comm-wait-over-30pct     exposed communication > 30 % of the step (article 5.1)
    oversubscribed-fabric-dp oversubscription > 1 with DP traffic crossing leaves (article 3.2)
    flat-network-too-large   a single-switch network past ~16 nodes (article 3.2)
    zero3-unneeded           ZeRO-3 where stage 2 fits and trains as fast (article 7.1;
                             starting_config.zero2_verdict)
    fp32-precision           FP32 training; BF16 halves memory (article 4.4, 7.1)
    hccl-buffer              Ascend: start HCCL_BUFFSIZE at 256 MB (article 4.3 measurement;
                             errata: not 10-20 % of HBM)
    ep-crosses-node          EP all-to-all leaves the HCCS/NVLink domain (article 2.5, 3.3)
    mfu-optimistic           an input MFU above published large-scale records (on the FLOPs
                             causal kernels compute)
    supernode-pays / supernode-does-not-pay / supernode-partly-used   see supernode_rules.py
    fewer-cards-faster       a batch-bound plan on given cards a smaller size beats: see fewer_cards.py

The article's starting configuration (section 7.1) is estimator.plan.starting_config.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

from estimator.contract.readings import bubble_fraction, first_of, is_ascend, number_at, scaleup_domain
from estimator.dotted import get_path
from estimator.model.compute import MFU_PLAUSIBLE_MAX
from estimator.money.pricing import causal_share
from estimator.plan.result import AdviceItem
from estimator.plan.starting_config import HCCL_BUFFSIZE_START_MB, zero2_verdict
from estimator.plan.supernode_rules import supernode_does_not_pay, supernode_partly_used, supernode_pays

MiB = 1024 * 1024
BUBBLE_LIMIT = 0.20  # article 2.3
COMM_WAIT_LIMIT = 0.30  # article 5.1
FLAT_NETWORK_MAX_NODES = 16  # article 3.2: flat up to ~10 servers, leaf-spine beyond ~16 nodes
HCCL_BUFFSIZE_MAX_SANE_MB = 1024  # each communicator reserves 2 x this (CANN env-var reference)

Advice = AdviceItem  # one row of result.advice (estimator.plan.result)
Doc = Mapping[str, Any]  # the contract's JSON (the normalized scenario, the result so far), read only


def _advice(
    code: str,
    severity: str,
    message: str,
    suggestion: str,
    params: Mapping[str, Any] | None = None,
    suggestion_code: str | None = None,
) -> Advice:
    """One piece of advice: `code` and `params` for the reader's language (the web layer renders
    them), `message`/`suggestion` the English default; `suggestion_code` names the variant of the
    suggestion (defaults to `code`)."""
    return AdviceItem(
        code=code,
        severity=severity,
        message=message,
        suggestion=suggestion,
        params=dict(params or {}),
        suggestion_code=suggestion_code or code,
    )


# --- rules ------------------------------------------------------------------------------------


def _memory_does_not_fit(s: Doc, r: Doc) -> Advice | None:
    if get_path(r, "memory.fits") is not False:
        return None
    total, hbm = number_at(r, "memory.per_card_bytes.total"), number_at(r, "memory.hbm_bytes")
    need = f" ({total / 1e9:.1f} GB per card against {hbm / 1e9:.1f} GB of HBM)" if total and hbm else ""
    steps = []
    zero = number_at(r, "parallelism.zero_stage")
    raise_zero = zero is not None and zero < 3
    if zero is not None and raise_zero:
        steps.append(f"raise the ZeRO stage (now {int(zero)})")
    add_recompute = get_path(r, "parallelism.recompute") in ("none", "selective", None)
    if add_recompute:
        steps.append("turn on activation recomputation (selective, then full)")
    steps += ["raise TP inside the node", "add pipeline stages across nodes", "or use cards with more HBM"]
    variant = "zero-recompute" if raise_zero and add_recompute else "zero" if raise_zero else None
    variant = variant or ("recompute" if add_recompute else "model-parallel")
    return _advice(
        "memory-does-not-fit",
        "error",
        f"The plan does not fit in card memory{need}.",
        ("; ".join(steps) + ".")[0].upper() + ("; ".join(steps) + ".")[1:],
        {"total_bytes": total, "hbm_bytes": hbm, "zero_stage": None if zero is None else int(zero)},
        f"memory-does-not-fit.{variant}",
    )


def _tp_crosses_node(s: Doc, r: Doc) -> Advice | None:
    tp, domain = number_at(r, "parallelism.tp"), scaleup_domain(s, r)
    if tp is None or domain is None or tp <= domain:
        return None
    return _advice(
        "tp-crosses-node",
        "warning",
        f"TP={int(tp)} spans more than the {int(domain)} cards of one HCCS/NVLink domain: its per-layer "
        "all-reduces would run over RoCE/InfiniBand.",
        f"Keep TP <= {int(domain)} and move the rest of the split into pipeline stages across nodes "
        "(article 2.2: tensor parallel inside a node only).",
        {"tp": int(tp), "domain": int(domain)},
    )


def _bubble_over_20pct(s: Doc, r: Doc) -> Advice | None:
    bubble, pp = number_at(r, "parallelism.bubble_fraction"), number_at(r, "parallelism.pp")
    if bubble is None or bubble <= BUBBLE_LIMIT:
        return None
    m = number_at(r, "parallelism.micro_batches")
    now = f" with {int(m)} micro-batches" if m else ""
    params = {"bubble": bubble, "micro_batches": int(m) if m else None, "pp": int(pp) if pp else None}
    if pp and pp > 1 and m and m >= 4 * pp:
        variant = "interleave"
        fix = (
            f"Micro-batches are already >= 4 x PP={int(pp)}: interleave the schedule (virtual_stages), "
            "use fewer pipeline stages, or balance the stages' layers."
        )
    elif pp and pp > 1:
        lo, hi = int(4 * pp), int(8 * pp)
        variant = "micro-batches"
        params.update(
            low=lo, high=hi, bubble_low=bubble_fraction(pp, lo), bubble_high=bubble_fraction(pp, hi)
        )
        fix = (
            f"Use {lo}-{hi} micro-batches per step (4-8 x PP={int(pp)}): bubble "
            f"{bubble_fraction(pp, lo):.0%}-{bubble_fraction(pp, hi):.0%}; or interleave (virtual_stages) or cut PP."
        )
        batch = _batch_fixes_micro_batches(s, r, lo, hi)
        if batch is not None:
            variant, fix = "global-batch", batch[0]
            params.update(batch[1])
    else:
        variant = "raise"
        fix = "Raise the number of micro-batches to 4-8 x the pipeline stages."
    return _advice(
        "bubble-over-20pct",
        "warning",
        f"The pipeline bubble is {bubble:.0%} of the step{now}.",
        fix,
        params,
        f"bubble-over-20pct.{variant}",
    )


LLAMA3_BATCH_TOKENS = (
    16 * 2**20
)  # Llama 3 405B's last global batch, 16M tokens a step on 16K H100 (docs/sources.md#llama3, section 3.4.1)


def _batch_fixes_micro_batches(s: Doc, r: Doc, lo: int, hi: int) -> tuple[str, dict[str, Any]] | None:
    """Where the global batch fixes the micro-batch count (micro-batch size 1 and micro_batches x
    DP x seq_len = the global batch's tokens: M cannot rise without a larger batch): the suggestion
    naming the global batch, in tokens a step, that gives `lo`-`hi` micro-batches at this DP and
    micro-batch size (lo x DP x 1 x seq_len), with its params; None where M can still rise."""
    m, dp = number_at(r, "parallelism.micro_batches"), number_at(r, "parallelism.dp")
    mbs, tokens = (
        number_at(r, "parallelism.micro_batch_size"),
        number_at(r, "parallelism.global_batch_tokens"),
    )
    seq = number_at(s, "training.seq_len")
    if not (m and dp and seq and tokens) or mbs != 1 or m * dp * seq != tokens:
        return None
    low, high = lo * dp * seq, hi * dp * seq
    fix = (
        f"The global batch of {tokens / 2**20:g}M tokens a step over DP={int(dp)} at micro-batch 1 fixes "
        f"{int(m)} micro-batches: {lo}-{hi} need {low / 2**20:g}M-{high / 2**20:g}M tokens a step "
        f"(training.global_batch_tokens), a training choice (Llama 3 405B used at most "
        f"{LLAMA3_BATCH_TOKENS / 2**20:g}M on 16K H100); or fewer cards (fewer DP ranks), interleave "
        "(virtual_stages) or cut PP."
    )
    params = {
        "dp": int(dp),
        "global_batch_tokens": tokens,
        "batch_low_tokens": low,
        "batch_high_tokens": high,
        "reference_batch_tokens": LLAMA3_BATCH_TOKENS,
    }
    return fix, params


def _comm_wait_over_30pct(s: Doc, r: Doc) -> Advice | None:
    """Assumes breakdown_s holds the exposed (not overlapped) part of each communication, which is
    how the step-time model adds them up to step_time_s."""
    step = number_at(r, "parallelism.step_time_s")
    found = {
        k: number_at(r, f"parallelism.breakdown_s.{k}") for k in ("tp_comm", "pp_comm", "dp_comm", "ep_comm")
    }
    parts = {k: v for k, v in found.items() if v is not None}
    if not step or step <= 0 or not parts:
        return None
    share = sum(parts.values()) / step
    if share <= COMM_WAIT_LIMIT:
        return None
    worst = max(parts, key=lambda k: parts[k])
    fixes = {
        "dp_comm": "Send BF16 gradients, fuse small gradients into large buckets, overlap the all-reduce "
        "with backward, use hierarchical all-reduce, and a 1:1 fabric (article 2.1, 3.2).",
        "tp_comm": "Keep TP inside the HCCS/NVLink domain and lower TP if the model fits (article 2.2).",
        "pp_comm": "Use fewer pipeline stages or place adjacent stages on nearby nodes (article 4.5).",
        "ep_comm": "Keep expert parallelism inside the node and replicate experts with DP (article 2.4).",
    }
    return _advice(
        "comm-wait-over-30pct",
        "warning",
        f"Communication not hidden behind compute is {share:.0%} of the step (largest: {worst}); "
        "above 30% the network is the bottleneck (article 5.1).",
        fixes[worst],
        {"share": share, "largest": worst},
        f"comm-wait-over-30pct.{worst}",
    )


def _oversubscribed_fabric_dp(s: Doc, r: Doc) -> Advice | None:
    ratio = first_of(number_at(r, "network.oversubscription"), number_at(s, "network.oversubscription"))
    dp, nodes = number_at(r, "parallelism.dp"), number_at(r, "compute.nodes")
    leaves, tiers = number_at(r, "network.leaf_switches"), number_at(r, "network.tiers")
    if ratio is None or ratio <= 1 or dp is None or dp <= 1:
        return None
    crosses = (leaves is not None and leaves > 1) or (tiers is not None and tiers >= 2)
    if not crosses or (nodes is not None and nodes <= 1):
        return None
    return _advice(
        "oversubscribed-fabric-dp",
        "warning",
        f"The fabric is oversubscribed {ratio:g}:1 and DP={int(dp)} gradient traffic crosses leaf switches, "
        f"so when all nodes exchange gradients at once the all-reduce gets about 1/{ratio:g} of the NIC bandwidth.",
        "Build the compute fabric 1:1 (the article's recommendation; 1.5:1-2:1 only on a budget), or place "
        "each DP group under one leaf / rail and use hierarchical all-reduce.",
        {"ratio": ratio, "dp": int(dp)},
    )


def _flat_network_too_large(s: Doc, r: Doc) -> Advice | None:
    tiers, nodes = number_at(r, "network.tiers"), number_at(r, "compute.nodes")
    if tiers is None or nodes is None or tiers != 1 or nodes <= FLAT_NETWORK_MAX_NODES:
        return None
    return _advice(
        "flat-network-too-large",
        "warning",
        f"{int(nodes)} nodes on a single flat switch layer: the article keeps flat networks to ~10 servers "
        "and uses leaf-spine beyond ~16 nodes.",
        "Use a two-tier leaf-spine (Clos) fabric, 1:1, rail-optimized where the servers have one NIC per card.",
        {"nodes": int(nodes)},
    )


def _zero3_unneeded(s: Doc, r: Doc) -> Advice | None:
    if zero2_verdict(r) != "as-fast":  # stage 2 does not fit, or only slower (the search chose 3 for it)
        return None
    return _advice(
        "zero3-unneeded",
        "warning",
        "ZeRO-3 is on although the model fits with ZeRO-2; stage 3 all-gathers the weights in forward and "
        "backward, about 1.5x the DP traffic of stage 2 (Rajbhandari et al. 2019).",
        "Use ZeRO stage 2 (article 7.1: stage 3 only when the model does not fit).",
    )


def _fp32_precision(s: Doc, r: Doc) -> Advice | None:
    prec = get_path(s, "training.precision")
    if not isinstance(prec, str) or prec.lower() not in ("fp32", "float32"):
        return None
    return _advice(
        "fp32-precision",
        "warning",
        "Training in FP32 doubles weight, gradient and activation memory and runs far below the BF16 peak.",
        "Train in BF16 mixed precision (FP32 master weights in the optimizer); BF16 keeps FP32's range "
        "(article 4.4, 7.1).",
    )


def _hccl_buffer(s: Doc, r: Doc) -> Advice | None:
    cards = first_of(number_at(r, "compute.cards"), number_at(s, "cluster.cards"))
    if not is_ascend(s, r) or cards is None or cards <= 1:
        return None
    current = first_of(number_at(s, "network.hccl_buffsize_mb"), number_at(s, "training.hccl_buffsize_mb"))
    if current is not None and HCCL_BUFFSIZE_START_MB <= current <= HCCL_BUFFSIZE_MAX_SANE_MB:
        return None
    start = HCCL_BUFFSIZE_START_MB
    mbs, seq = number_at(r, "parallelism.micro_batch_size"), number_at(s, "training.seq_len")
    hidden = first_of(number_at(r, "model.hidden_size"), number_at(s, "model.hidden_size"))
    if mbs and seq and hidden:  # CANN guidance: micro-batch x seq x hidden x dtype bytes / 1 MiB
        start = max(start, math.ceil(mbs * seq * hidden * 2 / MiB))
    why = f"set to {int(current)} MB" if current is not None else "not set (CANN default 200 MB)"
    out = _advice(
        "hccl-buffer",
        "info",
        f"HCCL_BUFFSIZE is {why}. The article measured 256 MB ~15% faster than 64 MB on 8-card DP, with "
        "no gain beyond; its '10-20% of HBM' is an erratum (6-13 GB per card, reserved twice per "
        "communicator).",
        f"Start with export HCCL_BUFFSIZE={start} (MB) and tune one variable at a time.",
        {"current_mb": None if current is None else int(current), "start_mb": start},
    )
    return dataclasses.replace(
        out, message_code="hccl-buffer.set" if current is not None else "hccl-buffer.unset"
    )


def _ep_crosses_node(s: Doc, r: Doc) -> Advice | None:
    """The EP group leaves the scale-up domain: its members sit expert_tp ranks apart under MoE
    parallel folding (tp apart in the classic layout), so it spans ep·expert_tp consecutive ranks."""
    ep, tp, domain = (
        number_at(r, "parallelism.ep"),
        number_at(r, "parallelism.tp") or 1.0,
        scaleup_domain(s, r),
    )
    etp = number_at(r, "parallelism.expert_tp")
    stride = tp if etp is None else etp
    if ep is None or ep <= 1 or domain is None or ep * stride <= domain:
        return None
    what = f"EP={int(ep)} x TP={int(tp)}" if etp is None else f"EP={int(ep)} x expert TP={int(etp)}"
    out = _advice(
        "ep-crosses-node",
        "info",
        f"{what} exceeds the {int(domain)}-card HCCS/NVLink domain: the MoE all-to-all "
        "runs over the scale-out NICs.",
        "Keep EP inside the node where the experts fit, or budget NIC bandwidth for the all-to-all and "
        "pair EP with DP so each expert has replicas (article 2.4, 3.3).",
        {"ep": int(ep), "tp": int(tp), "domain": int(domain)}
        | ({} if etp is None else {"expert_tp": int(etp)}),
    )
    return out if etp is None else dataclasses.replace(out, message_code="ep-crosses-node.folded")


def _mfu_optimistic(s: Doc, r: Doc) -> Advice | None:
    """A given MFU whose share on the FLOPs causal kernels compute (money.pricing.causal_share of the
    result's compute.flop_per_token_6n and _attention; the whole given MFU where they are missing) is
    above the records: at 128K tokens PaLM's count of the whole attention matrix is 1.5 times that."""
    mfu = number_at(s, "efficiency.mfu")
    dense, attention = (
        number_at(r, "compute.flop_per_token_6n"),
        number_at(r, "compute.flop_per_token_attention"),
    )
    share = causal_share(dense, attention) if dense is not None and attention is not None else 1.0
    if mfu is None or mfu * share <= MFU_PLAUSIBLE_MAX:
        return None
    return _advice(
        "mfu-optimistic",
        "info",
        f"MFU {mfu:.0%} is above published large-scale records (Llama 3 405B: 38-43%; MegaScale: 55%).",
        "Plan with 35-50% MFU, or leave efficiency.mfu out and let the layout model predict it.",
        {"mfu": mfu},
    )


RULES: dict[str, Callable[[Doc, Doc], Advice | None]] = {
    "memory-does-not-fit": _memory_does_not_fit,
    "tp-crosses-node": _tp_crosses_node,
    "bubble-over-20pct": _bubble_over_20pct,
    "comm-wait-over-30pct": _comm_wait_over_30pct,
    "oversubscribed-fabric-dp": _oversubscribed_fabric_dp,
    "flat-network-too-large": _flat_network_too_large,
    "zero3-unneeded": _zero3_unneeded,
    "fp32-precision": _fp32_precision,
    "hccl-buffer": _hccl_buffer,
    "ep-crosses-node": _ep_crosses_node,
    "mfu-optimistic": _mfu_optimistic,
    "supernode-pays": supernode_pays,
    "supernode-does-not-pay": supernode_does_not_pay,
    "supernode-partly-used": supernode_partly_used,
}


def advise(scenario: Doc, result: Doc) -> list[Advice]:
    """Every rule that fires, in RULES order (AdviceItem rows)."""
    s = scenario if isinstance(scenario, dict) else {}
    r = result if isinstance(result, dict) else {}
    out = []
    for rule in RULES.values():
        try:
            item = rule(s, r)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            item = None  # malformed input: skip the rule, never crash the plan
        if item is not None:
            out.append(item)
    return out


# --- starting configuration (article section 7.1) ----------------------------------------------
# --- starting configuration (article section 7.1) ----------------------------------------------
