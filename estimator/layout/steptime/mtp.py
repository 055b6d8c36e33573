"""Multi-token prediction (MTP) in the step time: the modules run on the device of the output head.

DeepSeek-V3 report (arXiv 2412.19437) section 2.2: each of the D MTP depths projects the normalised
hidden state and the next token's embedding (2h -> h, `model.mtp.MtpParams.projection`), runs one
transformer block and the output head it shares with the main model, with its own cross-entropy
over the vocabulary. Section 3.2.1: with DualPipe the deepest layers, the output head and the MTP
modules sit on the pipeline rank of the shallowest layers and the embedding (steptime.dualpipe).

Priced per micro-batch on the last stage, in the same terms as the main model: D times (the terms
of one layer of the model's last-layer kind + the head's GEMM and cross-entropy + the projection).
The projection runs at the linears' rate (DeepSeek-V3 section 3.3.1 keeps only the embedding, the
output head, the gating, the norms and attention in higher precision). Not priced: the MTP block's
hidden communication (its slowdown of overlapped compute), the two RMSNorms (2h per token).
Units: seconds per micro-batch.
"""

from __future__ import annotations

import numpy as np

from estimator.arrays import Num, arr
from estimator.layout.steptime.candidates import Candidates
from estimator.model.transformer import Architecture


def with_mtp(
    arch: Architecture,
    seq_len: int,
    c: Candidates,
    linear_rate: float,
    head: dict[str, Num],
    layer: dict[str, Num],
) -> dict[str, Num]:
    """The output head's terms plus those of the MTP modules (s per micro-batch on the last stage).

    seq_len: tokens per sequence; c: the candidate layouts (micro-batch, TP, CP); linear_rate: FLOP/s of the
    transformer linears; head: the output head's terms (gemm, elementwise); layer: one layer's terms
    (of the model's last-layer kind). Without MTP (num_nextn_predict_layers = 0) returns `head`."""
    depth = float(arch.num_nextn_predict_layers)
    if depth == 0.0:
        return head
    h = float(arch.hidden_size)
    tokens_per_tp = float(seq_len) / c.cp * c.mbs / c.tp
    projection = arr(tokens_per_tp) * 2.0 * (2.0 * h * h) * 3.0 / linear_rate  # forward + 2x backward
    out: dict[str, Num] = {}
    for key in set(head) | set(layer):
        out[key] = arr(head.get(key, 0.0)) * (1.0 + depth) + depth * arr(layer.get(key, 0.0))
    out["gemm"] = arr(out.get("gemm", 0.0)) + depth * projection
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def mtp_hidden(arch: Architecture, layer_hidden: dict[str, Num]) -> dict[str, Num]:
    """The MTP blocks' hidden (overlapped) communication on the last stage: D times one layer's."""
    depth = float(arch.num_nextn_predict_layers)
    return {k: depth * arr(v) for k, v in layer_hidden.items()}
