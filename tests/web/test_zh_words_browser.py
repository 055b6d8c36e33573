"""Issue 24 item 1, in headless Chromium: the Chinese report, compare, sweep and validation pages carry
no English word besides the glossary's acronyms and units (reports.glossary.ACRONYMS), the names of
catalog entries (a chip, server or model is called by its name in every language), what the user
typed, and identifiers shown as code (environment variables such as HCCL_BUFFSIZE).

Set CLUSTERPLAN_WORDS=1 to print each page's count and its English words."""

import os
import re
from pathlib import Path

import pytest

from estimator import catalog
from reports import glossary
from reports.services import create_estimate
from sweeps import services as sweep_services

from .test_browser import browser  # noqa: F401  (the shared Chromium fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTICLE = {
    "name": "70B 稠密模型",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"target_days": 30},
    "cost": {"currency": "CNY", "budget": 50e6},
}
SUPERNODE = {
    "name": "超节点",
    "model": {"preset": "deepseek-v3"},
    "hardware": {"accelerator": "ascend-910c"},
    "training": {"tokens": 1e12},
    "cluster": {"cards": 2304},
    "cost": {"currency": "CNY"},
}
SWEEP = {
    "name": "三个模型",
    "base": {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"cards": 1024},
        "efficiency": {"mfu": 0.45},
        "cost": {"currency": "CNY"},
    },
    "axes": {
        "model.preset": ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b"],
        "cluster.cards": [512, 1024, 2048, 4096],
    },
}
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")  # HCCL_BUFFSIZE, CUDA_DEVICE_MAX_CONNECTIONS


def _names() -> set[str]:
    """Words of catalog names and ids: a product is called by its name in every language."""
    out: set[str] = {"ClusterPlan"}
    tables = (catalog.accelerators(), catalog.servers(), catalog.presets(), catalog.supernodes())
    for table in tables:
        for entry_id, entry in table.items():
            for text in (entry_id, getattr(entry, "name", "")):
                out |= set(WORD.findall(str(text)))
    return out


def english_words(text: str, code: str = "") -> list[str]:
    """The words of `text` that are English: letters, not a glossary acronym or unit, not a name."""
    allowed = set(glossary.ACRONYMS) | _names() | {w for w in WORD.findall(code) if ENV_NAME.match(w)}
    words = []
    for w in WORD.findall(text):
        if ENV_NAME.match(w) and w in allowed:
            continue
        letters = re.sub(r"[0-9_]+$", "", w)  # "BF16" -> "BF", "FP8" -> "FP"
        if w in allowed or letters in allowed or len(letters) < 2:
            continue
        words.append(w)
    return words


def _count(page, name: str) -> list[str]:
    text = page.inner_text("main")
    code = " ".join(page.locator("main code").all_inner_texts())
    words = english_words(text, code)
    if os.environ.get("CLUSTERPLAN_WORDS"):
        print(f"\n{name}: {len(words)} English words: {sorted(set(words))}")
        Path(f"{os.environ['CLUSTERPLAN_WORDS']}-{name.split()[0]}.txt").write_text(text)
    return words


@pytest.fixture
def zh(browser):  # noqa: F811
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def _done_sweep(settings, monkeypatch):
    settings.SWEEP_CHUNK_SIZE = 100
    monkeypatch.setattr(sweep_services, "enqueue_chunks", lambda *a, **k: 0)
    sweep = sweep_services.create_sweep(SWEEP, owner=None)
    for i in range(sweep.chunks_total):
        sweep_services.run_chunk(sweep.pk, i, worker="test")
    sweep.refresh_from_db()
    assert sweep.status == "done"
    return sweep


def test_chinese_report_and_compare_have_no_english_words(zh, live_server):
    article = create_estimate(data=ARTICLE, owner=None)
    supernode = create_estimate(data=SUPERNODE, owner=None)
    zh.goto(f"{live_server.url}/zh-hans/r/{article.share_token}/")
    zh.wait_for_selector("#chart-cost .main-svg", timeout=30_000)
    report = _count(zh, "report")
    zh.goto(f"{live_server.url}/zh-hans/r/{supernode.share_token}/")
    zh.wait_for_selector("#chart-cost .main-svg", timeout=30_000)
    report_supernode = _count(zh, "report (supernode)")
    zh.goto(f"{live_server.url}/zh-hans/compare/?r={article.share_token}&r={supernode.share_token}")
    compare = _count(zh, "compare")
    assert (report, report_supernode, compare) == ([], [], [])


def test_chinese_sweep_and_validation_have_no_english_words(zh, live_server, settings, monkeypatch):
    sweep = _done_sweep(settings, monkeypatch)
    zh.goto(f"{live_server.url}/zh-hans/sweeps/{sweep.share_token}/")
    zh.wait_for_selector("#pareto .main-svg", timeout=30_000)
    swept = _count(zh, "sweep")
    zh.goto(f"{live_server.url}/zh-hans/validation/")
    validation = _count(zh, "validation")
    assert (swept, validation) == ([], [])


def test_the_counter_finds_english_and_spares_acronyms_names_and_env_names():
    assert english_words("Step time 每步 1.2 s") == ["Step", "time"]
    assert english_words("MFU 41% · TP 8 · BF16 · Ascend 910B2 · 128 GB") == []
    assert english_words("HCCL_BUFFSIZE", code="HCCL_BUFFSIZE") == []
    assert english_words("HCCL_BUFFSIZE") == ["HCCL_BUFFSIZE"]  # only where it is shown as code
