"""Benchmark of the vectorized layout search (estimator.layout.search.search).

Prints candidates evaluated per second (one core: numpy element-wise work is single-threaded) and
the wall time of full searches:
- Llama-3.1-405B (126 layers, h 16384, 128 heads, 8 KV heads, ffn 53248, vocab 128256) on 16,384
  H100 (8 per node, seq 8192, global batch 16M tokens, 400 Gb/s NIC per GPU);
- DeepSeek-V3 (671B MoE, 256 experts top-8, MLA) on 2,048 H800 (seq 4096, batch 15360 sequences).
Targets: >= 100,000 candidates/s and the 405B search under 1 s.

    .venv/bin/python bench/layout_search.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from estimator import catalog
from estimator.layout.search import LayoutProblem, search
from estimator.model.transformer import Architecture, param_counts

LLAMA_405B = Architecture(
    num_hidden_layers=126,
    hidden_size=16384,
    num_attention_heads=128,
    num_key_value_heads=8,
    head_dim=128,
    intermediate_size=53248,
    vocab_size=128256,
    hidden_act="silu",
)
DEEPSEEK_V3 = Architecture(
    num_hidden_layers=61,
    hidden_size=7168,
    num_attention_heads=128,
    num_key_value_heads=128,
    head_dim=192,
    intermediate_size=18432,
    vocab_size=129280,
    hidden_act="silu",
    num_experts=256,
    num_experts_per_tok=8,
    n_shared_experts=1,
    moe_intermediate_size=2048,
    first_k_dense_replace=3,
    q_lora_rank=1536,
    kv_lora_rank=512,
    qk_nope_head_dim=128,
    qk_rope_head_dim=64,
    v_head_dim=128,
)


def problems() -> dict[str, LayoutProblem]:
    return {
        "llama-3.1-405b on 16384 h100": LayoutProblem(
            arch=LLAMA_405B,
            counts=param_counts(LLAMA_405B),
            seq_len=8192,
            global_batch_tokens=16 * 2**20,
            cards=16384,
            accelerator=catalog.accelerator("h100-sxm"),
            cards_per_node=8,
            nic_bytes_per_s_per_card=50e9,
        ),
        "deepseek-v3 on 2048 h800": LayoutProblem(
            arch=DEEPSEEK_V3,
            counts=param_counts(DEEPSEEK_V3),
            seq_len=4096,
            global_batch_tokens=15360 * 4096,
            cards=2048,
            accelerator=catalog.accelerator("h800-sxm"),
            cards_per_node=8,
            nic_bytes_per_s_per_card=50e9,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    total_candidates, total_time = 0, 0.0
    for name, problem in problems().items():
        search(problem)  # warm-up (imports, caches)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = search(problem)
            times.append(time.perf_counter() - t0)
        best_t = min(times)
        total_candidates += result.evaluated
        total_time += best_t
        b = result.best
        print(
            f"{name}: {result.evaluated} candidates, {result.feasible} feasible, "
            f"search {best_t * 1e3:.1f} ms (best of {args.repeat}), {result.evaluated / best_t:,.0f} candidates/s"
        )
        if b:
            print(
                f"  best: tp {b.tp} pp {b.pp} dp {b.dp} ep {b.ep} cp {b.cp} v {b.virtual_stages} mbs {b.micro_batch_size} "
                f"zero {b.zero_stage} recompute {b.recompute} sp {b.sequence_parallel}: step {b.step_time_s:.2f} s, "
                f"MFU {b.predicted_mfu:.3f}, HFU {b.predicted_hfu:.3f}, {b.per_card_bytes['total'] / 1e9:.1f} GB/card"
            )
        print(f"  rejected: {result.rejected}")
    print(f"overall: {total_candidates / total_time:,.0f} candidates/s")


if __name__ == "__main__":
    sys.exit(machine.run(main))
