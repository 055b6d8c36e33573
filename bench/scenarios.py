"""The scenarios more than one bench posts, in one place so that their figures stay comparable.

LLAMA_405B_60_DAYS: Llama 3.1 405B, 15T tokens, seq 8192, a 16M-token batch, on H100 (DGX H100)
within 60 days (a deadline: the cluster size is searched); bench/api_estimate.py and
bench/report_page.py. NORMAL: Llama 3.1 8B, 2e11 tokens on 64 Ascend 910B2 (a plan of tens of
milliseconds); bench/hostile_load.py and bench/service_faults.py.
"""

from __future__ import annotations

from typing import Any

LLAMA_405B_60_DAYS: dict[str, Any] = {
    "name": "bench: Llama 3.1 405B, 15T tokens, 60 days on H100",
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"target_days": 60},
}
NORMAL: dict[str, Any] = {
    "name": "normal",
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 2e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 64},
}
