"""The source article's starting configuration (section 7.1; docs/sources.md#source-article) filled
in for a plan: `starting_configuration(scenario, result)` -> list of Setting rows (estimator.plan.result: setting,
value, reason, code, params, value_code), read from the contract dicts only, telling the same story as the chosen layout."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from estimator.contract.readings import bubble_fraction, is_ascend, number_at
from estimator.dotted import get_path
from estimator.layout.search import TIE_BAND
from estimator.plan.result import Setting

HCCL_BUFFSIZE_START_MB = 256  # article 4.3: 256 MB beat 64 MB by ~15 % on 8-card DP; CANN default 200

# Every setting a row can name (the web layer labels each; tests/estimator/test_starting_config.py
# checks that the rows name nothing else). Environment variables keep the name one types.
TRAINING_SETTINGS = (
    "precision",
    "recompute",
    "layout",
    "micro_batches",
    "gradient_compression",
    "gradient_fusion",
    "zero_stage",
    "expert_parallel",
    "pipeline_split",
)
ENVIRONMENT_SETTINGS = (
    "HCCL_BUFFSIZE",
    "HCCL_CONNECT_TIMEOUT",
    "HCCL_DETERMINISTIC",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "NCCL_BUFFSIZE",
)
SETTINGS = TRAINING_SETTINGS + ENVIRONMENT_SETTINGS


Doc = Mapping[str, Any]  # the contract's JSON (the normalized scenario, the result so far), read only


def _setting(
    setting: str,
    value: Any,
    reason: str,
    code: str,
    params: Mapping[str, Any] | None = None,
    value_code: str | None = None,
) -> Setting:
    """One row: `setting` and `value` (identifiers and numbers, shown as they are unless
    `value_code` names a wording for the reader's language), the English `reason`, and the `code`
    and `params` that render the reason in the reader's language."""
    return Setting(
        setting=setting,
        value=value,
        reason=reason,
        code=code,
        params=dict(params or {}),
        value_code=value_code or None,
    )


_RECOMPUTE_REASONS = {
    "none": "The chosen layout fits in HBM without recomputation, so none is fastest (article 5.4).",
    "selective": "Recomputation costs a little compute and roughly doubles the batch that fits "
    "(article 5.4); selective keeps 34·s·b·h/t bytes per layer (Korthikanti et al. 2022).",
    "partial": "Block recompute of the fewest whole layers per stage that fit in HBM: less recompute "
    "than full, and the chosen layout needs it to fit (Megatron --recompute-num-layers).",
    "full": "Only full recomputation makes the chosen layout fit in HBM; it costs about one extra "
    "forward pass (article 5.4).",
    "does-not-fit": "No layout fits yet: start from full recomputation, then raise the ZeRO stage or the "
    "model parallelism (article 5.4, 7.1).",
}


def _recompute_row(r: Doc, fits: Any) -> Setting:
    """Recomputation as the chosen layout has it (one story with 'the layout'), full when nothing fits."""
    chosen = get_path(r, "parallelism.recompute")
    if fits is False:
        return _setting(
            "recompute", "full", _RECOMPUTE_REASONS["does-not-fit"], "start.recompute.does-not-fit"
        )
    if chosen not in _RECOMPUTE_REASONS:
        chosen = "selective"
    return _setting("recompute", chosen, _RECOMPUTE_REASONS[chosen], f"start.recompute.{chosen}")


def _micro_batches_row(r: Doc, pp: float) -> Setting:
    m = number_at(r, "parallelism.micro_batches")
    if pp <= 1:
        return _setting(
            "micro_batches",
            int(m) if m else "as needed for the global batch",
            "No pipeline, so micro-batches only set gradient accumulation.",
            "start.micro_batches.no-pipeline",
            {},
            None if m else "start.value.as-needed",
        )
    lo, hi = int(4 * pp), int(8 * pp)
    params = {
        "pp": int(pp),
        "low": lo,
        "high": hi,
        "bubble_low": bubble_fraction(pp, lo),
        "bubble_high": bubble_fraction(pp, hi),
    }
    reason = (
        f"4-8 x the {int(pp)} pipeline stages: bubble (P-1)/(M+P-1) = "
        f"{bubble_fraction(pp, lo):.0%} at {lo}, {bubble_fraction(pp, hi):.0%} at {hi} (article 2.3)."
    )
    if m and lo <= m:
        # the chosen layout's own bubble (interleaving included), the one the layout table states
        bubble = number_at(r, "parallelism.bubble_fraction")
        params["layout_bubble"] = bubble_fraction(pp, m) if bubble is None else bubble
        return _setting(
            "micro_batches",
            int(m),
            reason + f" The chosen layout runs {int(m)} (bubble {params['layout_bubble']:.1%}).",
            "start.micro_batches.chosen",
            params | {"micro_batches": int(m)},
        )
    return _setting("micro_batches", f"{lo}-{hi}", reason, "start.micro_batches.range", params)


def zero2_verdict(r: Doc) -> str | None:
    """What stage 2 would do in place of the chosen ZeRO-3 layout (result.memory's ZeRO-2 twin: the
    same layout with stage 2): "no-fit"; "slower" where it fits but its tokens/s fall below the
    search's tie band (layout.search.TIE_BAND: stage 3 freed memory for less recomputation or a larger
    micro-batch, and the search preferred it for its speed); "as-fast" where it fits within the band
    or faster (also a result without the speed, stored before it was kept); None when the chosen
    layout is not ZeRO-3. The one rule advice zero3-unneeded and the starting configuration read."""
    if number_at(r, "parallelism.zero_stage") != 3:
        return None
    fits_z2 = get_path(r, "memory.fits_with_zero2")
    if fits_z2 is not True:
        return "no-fit" if fits_z2 is False else None
    speed = number_at(r, "memory.zero2_speed_factor")
    return "slower" if speed is not None and speed < 1.0 / (1.0 + TIE_BAND) else "as-fast"


def _zero_row(r: Doc, pp: float, fits_z2: Any) -> Setting:
    """The chosen layout's ZeRO stage when there is one; else the article's rule."""
    chosen = number_at(r, "parallelism.zero_stage")
    fits = get_path(r, "memory.fits")
    verdict = zero2_verdict(r)
    if verdict == "slower" and fits is not False:
        speed = number_at(r, "memory.zero2_speed_factor") or 1.0
        return _setting(
            "zero_stage",
            3,
            f"Stage 2 fits too, but only with more recomputation or smaller micro-batches: the same layout "
            f"with stage 2 trains {1.0 - speed:.0%} slower, so shard the weights too.",
            "start.zero_stage.3-faster",
            {"slower_by": 1.0 - speed},
        )
    if fits_z2 is False or (chosen == 3 and fits is not False and verdict != "as-fast"):
        return _setting(
            "zero_stage",
            3,
            "The model does not fit with stage 2, so shard the weights too (article 7.1).",
            "start.zero_stage.3",
        )
    if chosen is not None and fits is not False and chosen in (0, 1):
        return _setting(
            "zero_stage",
            int(chosen),
            "The chosen layout fits with the optimizer state sharded (stage 1, Megatron's distributed "
            "optimizer) or not at all (stage 0), and moves less data than stage 2; with pipeline "
            "parallelism DeepSpeed supports only stage 1 (deepspeedai/DeepSpeed#823).",
            "start.zero_stage.chosen-low",
            {"stage": int(chosen)},
        )
    if pp > 1:
        return _setting(
            "zero_stage",
            1,
            "Stage 2 is the article's default, but with pipeline parallelism DeepSpeed supports "
            "only stage 1 (deepspeedai/DeepSpeed#823, #1629); Megatron's distributed optimizer "
            "is the stage-1 equivalent.",
            "start.zero_stage.pipeline",
        )
    return _setting(
        "zero_stage",
        2,
        "Shard optimizer state and gradients; stage 3 only when the model does not fit (article 7.1).",
        "start.zero_stage.2",
    )


def _folding_rows(r: Doc) -> list[Setting]:
    """The chosen layout's MoE folding and uneven pipeline split as Megatron-Core flags."""
    out = []
    ep, etp = number_at(r, "parallelism.ep"), number_at(r, "parallelism.expert_tp")
    if ep is not None and etp is not None and ep > 1:
        edp = number_at(r, "parallelism.expert_dp") or 1
        params = {"ep": int(ep), "expert_tp": int(etp), "expert_dp": int(edp)}
        out.append(
            _setting(
                "expert_parallel",
                f"EP {int(ep)} x expert TP {int(etp)} (expert DP {int(edp)})",
                f"--expert-model-parallel-size {int(ep)} --expert-tensor-parallel-size {int(etp)}: the "
                "MoE layers regroup the stage's TP x CP x DP ranks (Megatron-Core parallel folding).",
                "start.expert_parallel",
                params,
            )
        )
    pp = int(number_at(r, "parallelism.pp") or 1)
    first, last = (
        number_at(r, "parallelism.first_stage_layers"),
        number_at(r, "parallelism.last_stage_layers"),
    )
    layers = number_at(r, "model.architecture.num_hidden_layers")
    if pp > 1 and first is not None and last is not None and layers is not None:
        middle = int((layers - first - last) // (pp - 2)) if pp > 2 else int(first)
        if {int(first), int(last)} != {middle}:
            params = {"first": int(first), "last": int(last), "middle": middle}
            out.append(
                _setting(
                    "pipeline_split",
                    f"first {int(first)} / last {int(last)} layers (others {middle})",
                    "Uneven pipeline split: the first and last devices also hold the embedding and the "
                    "loss (Megatron-Core --pipeline-model-parallel-layout, or "
                    "--account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split).",
                    "start.pipeline_split",
                    params,
                )
            )
    return out


def _vendor_rows(s: Doc, r: Doc) -> list[Setting]:
    if is_ascend(s, r):
        nodes = number_at(r, "compute.nodes") or 1
        return [
            _setting(
                "HCCL_BUFFSIZE",
                HCCL_BUFFSIZE_START_MB,
                "MB; CANN default 200. The article measured 256 MB ~15% faster than 64 MB on "
                "8-card DP and no gain above (article 4.3; not 10-20% of HBM).",
                "start.hccl_buffsize",
            ),
            _setting(
                "HCCL_CONNECT_TIMEOUT",
                1200 if nodes > 16 else 120,
                "Seconds, range 120-7200 (CANN default 120); raise it for many nodes so rank "
                "start-up skew does not fail initialisation (article 4.3, 5.2).",
                "start.hccl_connect_timeout",
            ),
            _setting(
                "HCCL_DETERMINISTIC",
                "false",
                "true makes reductions reproducible at some speed cost: use it for debugging only "
                "(article 4.3).",
                "start.hccl_deterministic",
            ),
        ]
    return [
        _setting(
            "CUDA_DEVICE_MAX_CONNECTIONS",
            1,
            "Megatron-LM requires it with sequence parallelism so TP communication overlaps compute in order.",
            "start.cuda_device_max_connections",
        ),
        _setting(
            "NCCL_BUFFSIZE",
            "default (4 MiB)",
            "The article's 256 MB figure is for HCCL on Ascend; NCCL's default is sound.",
            "start.nccl_buffsize",
            {},
            "start.value.nccl-default",
        ),
    ]


# the chosen layout's fields the starting configuration repeats (all of them: it is the layout planned)
LAYOUT_FIELDS = ("tp", "pp", "virtual_stages", "dp", "ep", "cp", "micro_batch_size", "sequence_parallel")


def _layout_row(r: Doc) -> Setting:
    """The chosen layout as planned, interleaved (virtual) stages, EP, CP, micro-batch and sequence
    parallelism included; `params` holds its fields so the row is the layout, not a summary of it."""
    par = get_path(r, "parallelism") or {}
    layout = {k: par.get(k) for k in LAYOUT_FIELDS if par.get(k) is not None}
    text = f"TP {layout.get('tp')} x PP {layout.get('pp')}"
    if (layout.get("virtual_stages") or 1) > 1:
        text += f" ({layout['virtual_stages']} virtual stages per rank, interleaved 1F1B)"
    text += f" x DP {layout.get('dp')}"
    for key, name in (("ep", "EP"), ("cp", "CP")):
        if (layout.get(key) or 1) > 1:
            text += f", {name} {layout[key]}"
    text += f", micro-batch {layout.get('micro_batch_size')}"
    if layout.get("sequence_parallel"):
        text += ", sequence parallel"
    return _setting(
        "layout",
        text,
        "TP (and EP) inside the node over HCCS/NVLink, PP and DP across nodes over RoCE/IB (article 2.5).",
        "start.layout",
        layout,
    )


def starting_configuration(scenario: Doc, result: Doc) -> list[Setting]:
    """The article's 7.1 table filled in for this plan, consistent with the chosen layout (its
    recomputation, ZeRO stage and micro-batches): Setting rows."""
    s = scenario if isinstance(scenario, dict) else {}
    r = result if isinstance(result, dict) else {}
    pp = number_at(r, "parallelism.pp") or 1.0
    tp, dp = number_at(r, "parallelism.tp"), number_at(r, "parallelism.dp")
    fits = get_path(r, "memory.fits")
    fits_z2 = get_path(r, "memory.fits_with_zero2")
    prec = str(get_path(s, "training.precision") or "bf16").lower()
    out = []
    if prec == "fp8":
        out.append(
            _setting(
                "precision",
                "fp8 (bf16 master copy)",
                "FP8 as requested; keep BF16/FP32 master weights (article 7.1 starts from BF16).",
                "start.precision.fp8",
                {},
                "start.value.fp8-master",
            )
        )
    else:
        out.append(
            _setting(
                "precision",
                "bf16",
                "BF16 has FP32's dynamic range, so it is more stable than FP16, and it halves "
                "memory against FP32 (article 4.4, 7.1).",
                "start.precision.bf16",
            )
        )
    out.append(_recompute_row(r, fits))
    if tp is not None and dp is not None:
        out.append(_layout_row(r))
    out.append(_micro_batches_row(r, pp))
    out.append(
        _setting(
            "gradient_compression",
            "bf16 gradients",
            "All-reduce BF16 gradients: half the bytes of FP32 (article 2.1, 7.1).",
            "start.gradient_compression",
            {},
            "start.value.bf16-gradients",
        )
    )
    out.append(
        _setting(
            "gradient_fusion",
            "on, overlapped with backward",
            "Fuse small gradients into large buckets and overlap the all-reduce with backward "
            "(article 2.1; Megatron --overlap-grad-reduce, DeepSpeed overlap_comm).",
            "start.gradient_fusion",
            {},
            "start.value.fusion-on",
        )
    )
    out.append(_zero_row(r, pp, fits_z2))
    return out + _folding_rows(r) + _vendor_rows(s, r)
