"""Issue 24 item 1, in headless Chromium: the Chinese report, compare, sweep and validation pages carry
no English word besides the glossary's acronyms and units (reports.glossary.ACRONYMS) and the names
of catalog entries and software stacks (a chip, server or model is called by its name in every
language). Not counted: what one types, shown as code (HCCL_BUFFSIZE, --overlap-grad-reduce, advice
codes), and citations quoted as published (lang="en": catalog sources, published cases).

Set CLUSTERPLAN_WORDS=<path prefix> to print each page's count and its English words (and write each
page's counted text to <prefix>-<page>.txt); CLUSTERPLAN_SCREENSHOTS=docs/screenshots writes the
sweep-over-three-models screenshots in both languages."""

import os
import re
from pathlib import Path

import pytest

from estimator import catalog
from estimator.layout.stacks import STACKS
from reports import glossary, labels
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
SHOTS = os.environ.get("CLUSTERPLAN_SCREENSHOTS")
HEX = re.compile(r"[0-9a-f]*[0-9][0-9a-f]*")  # the catalog version's hash


def _names() -> set[str]:
    """Words of catalog names and ids and of the software stacks' names (their capitalised words):
    a product is called by its name in every language."""
    out: set[str] = {"ClusterPlan"}
    tables = (
        catalog.accelerators(),
        catalog.servers(),
        catalog.presets(),
        catalog.supernodes(),
        catalog.switches(),
        catalog.transceivers(),
        catalog.drives(),
    )
    for table in tables:
        for entry_id, entry in table.items():
            for text in (entry_id, getattr(entry, "name", ""), getattr(entry, "scaleup_link", "")):
                out |= set(WORD.findall(str(text)))
    for family in labels.CHIP_FAMILIES.values():
        out |= set(WORD.findall(family))
    for stack_id, stack in STACKS.items():
        out |= set(WORD.findall(stack_id)) | {w for w in WORD.findall(stack.name) if w[0].isupper()}
    return out


def english_words(text: str) -> list[str]:
    """The words of `text` that are English: letters, not a glossary acronym or unit, not a name,
    not a hexadecimal version stamp."""
    allowed = set(glossary.ACRONYMS) | _names()
    words = []
    for w in WORD.findall(text):
        letters = re.sub(r"[0-9_]+$", "", w)  # "BF16" -> "BF", "FP8" -> "FP"
        if w in allowed or letters in allowed or len(letters) < 2 or HEX.fullmatch(w):
            continue
        words.append(w)
    return words


# What the page says, without what is typed (<code>) and what is quoted as published (lang="en")
TEXT = """() => {
  const main = document.querySelector("main").cloneNode(true);
  main.querySelectorAll("code, [lang=en]").forEach((el) => el.remove());
  document.body.appendChild(main);
  const text = main.innerText;
  main.remove();
  return text;
}"""


def _count(page, name: str) -> list[str]:
    text = page.evaluate(TEXT)
    words = english_words(text)
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
    sweep = sweep_services.create_sweep(data=SWEEP, owner=None)
    for i in range(sweep.chunks_total):
        sweep_services.run_chunk(sweep_id=sweep.pk, index=i, worker="test")
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


def test_chinese_report_of_a_plan_sized_for_a_chance_has_no_english_words(zh, live_server):
    """cluster.deadline_confidence: the cards' line (reports.summary.confidence_text), the working
    row and, where no size reaches the chance, the warning deadline-confidence-missed."""
    pages = []
    for tokens, q in ((5e11, 0.9), (5e12, 0.99)):  # the second reaches no 99% (70B, 5T tokens, 30 days)
        data = {
            **ARTICLE,
            "training": {"tokens": tokens},
            "cluster": {"target_days": 30, "deadline_confidence": q},
        }
        est = create_estimate(data=data, owner=None)
        zh.goto(f"{live_server.url}/zh-hans/r/{est.share_token}/")
        zh.wait_for_selector("#chart-cost .main-svg", timeout=30_000)
        cards = zh.inner_text("#headline-cards")  # the chance asked for, in the cards' line
        assert f"{q:.0%} 的概率在 30 天期限内完成" in cards, cards
        pages.append(_count(zh, f"report-confidence-{q}"))
    assert pages == [[], []]


def test_chinese_sweep_and_validation_have_no_english_words(zh, live_server, settings, monkeypatch):
    sweep = _done_sweep(settings, monkeypatch)
    zh.goto(f"{live_server.url}/zh-hans/sweeps/{sweep.share_token}/")
    zh.wait_for_selector("#pareto .main-svg", timeout=30_000)
    swept = _count(zh, "sweep")
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        zh.screenshot(path=str(Path(SHOTS) / "sweep-report-zh.png"), full_page=True)
        en = zh.context.browser.new_page(locale="en-US", viewport={"width": 1280, "height": 900})
        en.goto(f"{live_server.url}/sweeps/{sweep.share_token}/")
        en.wait_for_selector("#pareto .main-svg", timeout=30_000)
        en.screenshot(path=str(Path(SHOTS) / "sweep-report-en.png"), full_page=True)
        en.close()
    zh.goto(f"{live_server.url}/zh-hans/validation/")
    validation = _count(zh, "validation")
    assert (swept, validation) == ([], [])


def test_the_counter_finds_english_and_spares_acronyms_and_names():
    assert english_words("Step time 每步 1.2 s") == ["Step", "time"]
    assert english_words("MFU 41% · TP 8 · BF16 · Ascend 910B2 · 128 GB · 819f76fc") == []
