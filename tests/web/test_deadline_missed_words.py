"""The warning of a deadline no cluster meets reads in the reader's language, without the global
batch's advice where the MFU is given (more cards never lower a given MFU: the batch is no lever)."""

from __future__ import annotations

from django.utils import translation

from reports import messages

PARAMS = {"days": 51.44, "target_days": 45.0, "cards": 54_272}


def _render(message_code: str | None, language: str) -> str:
    item = {"code": "deadline-missed", "severity": "warning", "message": "English default", "params": PARAMS}
    if message_code:
        item["message_code"] = message_code
    with translation.override(language):
        return str(messages.warning(item, "USD")["message"])


def test_the_given_mfu_variant_names_no_global_batch_in_either_language():
    en = _render("deadline-missed.mfu-given", "en")
    assert en.startswith("No cluster size meets the 45 days target") and "54,272 cards" in en
    assert "global batch" not in en and "fewer tokens or lose less time" in en
    zh = _render("deadline-missed.mfu-given", "zh-hans")
    assert "54,272 张卡" in zh and "全局批大小" not in zh and "减少中断损失的时间" in zh


def test_the_predicted_mfu_warning_keeps_the_batch_advice():
    assert "raise the global batch" in _render(None, "en")
    assert "增大全局批大小" in _render(None, "zh-hans")
