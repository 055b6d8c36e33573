"""What the sweep page tests share: a sweep run in process with its page in English and Chinese,
the sweep builder's base fields (70B on Ascend 910B2, 500B tokens, CNY) and the check that a text
reads in Chinese words only."""

from __future__ import annotations

import re
from typing import Any

from sweeps import services as sweep_services
from tests.web.test_zh_words_browser import english_words

CJK = re.compile(r"[\u4e00-\u9fff]")

# the builder's base fields the sweep builder tests start from (each adds its sizing and axes)
BUILDER_BASE = {
    "preset": "llama-3.1-70b",
    "accelerator": "ascend-910b2",
    "tokens": "500B",
    "currency": "CNY",
}


def run_sweep(monkeypatch: Any, client: Any, data: dict[str, Any]) -> tuple[Any, str, str]:
    """The sweep `data` ({name, base, axes}) created and run chunk by chunk in this process (no
    worker), and its page in English and in Chinese."""
    monkeypatch.setattr(sweep_services, "enqueue_chunks", lambda *a, **k: 0)
    sweep = sweep_services.create_sweep(data=data, owner=None)
    for i in range(sweep.chunks_total):
        sweep_services.run_chunk(sweep_id=sweep.pk, index=i, worker="test")
    sweep.refresh_from_db()
    assert sweep.status == "done", sweep.error
    en = client.get(f"/sweeps/{sweep.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    zh = client.get(f"/zh-hans/sweeps/{sweep.share_token}/").content.decode()
    return sweep, en, zh


def zh_only(text: str) -> None:
    """`text` is Chinese, with no English word and no field path (web texts name none)."""
    assert CJK.search(text) and english_words(text) == [], text
    assert "cluster." not in text
