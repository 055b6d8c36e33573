"""The advice that fewer cards finish sooner, and the bubble's global-batch variant, read in the
reader's language with the core's params (estimator.plan.fewer_cards, plan.advice)."""

from __future__ import annotations

from django.utils import translation

from reports import messages

FEWER = {
    "code": "fewer-cards-faster",
    "severity": "warning",
    "message": "English default",
    "suggestion": "English default",
    "suggestion_code": "fewer-cards-faster",
    "params": {
        "cards": 16384,
        "days": 198.5,
        "faster_cards": 10240,
        "faster_days": 134.6,
        "micro_batches": 32,
        "faster_micro_batches": 16,
        "pp": 64,
        "dp": 16,
        "faster_pp": 16,
        "faster_dp": 40,
        "global_batch_tokens": 4194304,
    },
}
BUBBLE = {
    "code": "bubble-over-20pct",
    "severity": "warning",
    "message": "English default",
    "suggestion": "English default",
    "suggestion_code": "bubble-over-20pct.global-batch",
    "params": {
        "bubble": 0.64,
        "micro_batches": 32,
        "pp": 64,
        "low": 256,
        "high": 512,
        "dp": 16,
        "global_batch_tokens": 4194304,
        "batch_low_tokens": 33554432,
        "batch_high_tokens": 67108864,
        "reference_batch_tokens": 16777216,
    },
}


def _render(item: dict, language: str) -> dict:
    with translation.override(language):
        return {k: str(v) for k, v in messages.advice(item, "USD").items()}


def test_fewer_cards_reads_in_english_and_chinese():
    en = _render(FEWER, "en")
    assert en["message"].startswith("10,240 cards would finish sooner than these 16,384")
    assert "DP=16" in en["message"] and "32 micro-batches" in en["message"]
    assert "PP=16 x DP=40" in en["suggestion"] and "English default" not in en["suggestion"]
    zh = _render(FEWER, "zh-hans")
    assert "10,240 张卡" in zh["message"] and "更早完成" in zh["message"]
    assert "按 10,240 张卡规划" in zh["suggestion"]


def test_the_bubble_names_the_batch_to_ask_in_both_languages():
    en = _render(BUBBLE, "en")["suggestion"]
    assert "256-512 need" in en and "training.global_batch_tokens" in en and "Llama 3 405B" in en
    zh = _render(BUBBLE, "zh-hans")["suggestion"]
    assert "全局批大小" in zh and "Llama 3 405B" in zh and "English default" not in zh


def test_the_re_planned_batch_days_read_in_both_languages():
    item = {
        **BUBBLE,
        "suggestion_code": "bubble-over-20pct.global-batch-planned",
        "params": {**BUBBLE["params"], "batch_days": 72.0},
    }
    assert "A re-plan of these cards at" in _render(item, "en")["suggestion"]
    assert "72" in _render(item, "en")["suggestion"]
    assert "重新规划" in _render(item, "zh-hans")["suggestion"]
