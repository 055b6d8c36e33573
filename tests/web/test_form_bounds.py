"""A range error's limit in the reader's number format (reports.form_bounds, formatting.bound):
training.tokens is at most 1e17 and training.global_batch_tokens at most 1e10 (estimator.contract.run)."""

import pytest
from django.utils import translation

from reports import formatting, messages
from reports.forms import EstimateForm

FORM = {
    "model_source": "preset",
    "preset": "llama-3.1-70b",
    "accelerator": "ascend-910b2",
    "tokens": "1e18",
    "global_batch_tokens": "2e10",
    "sizing": "deadline",
    "target_days": "30",
    "currency": "USD",
}


def _errors(lang: str) -> dict:
    with translation.override(lang):
        form = EstimateForm(data=FORM)
        assert not form.is_valid()
        return {k: " ".join(v) for k, v in form.errors.items()}


@pytest.mark.django_db
def test_the_token_limit_reads_as_a_number_not_python_float_text():
    en, zh = _errors("en"), _errors("zh-hans")
    assert "1 × 10¹⁷" in en["tokens"] and "1e+17" not in en["tokens"]
    assert "10B" in en["global_batch_tokens"] and "1e+10" not in en["global_batch_tokens"]
    assert "1 × 10¹⁷" in zh["tokens"] and "1e+17" not in zh["tokens"]
    assert "100亿" in zh["global_batch_tokens"]  # 1e10 = 100 × 10^8 (亿)


@pytest.mark.parametrize(
    ("value", "en", "zh"),
    [
        (3650, "3,650", "3,650"),
        (1e6, "1M", "100万"),  # 10^6 = 100 × 10^4 (万)
        (1e14, "100T", "100万亿"),  # 10^14 = 100 × 10^12 (万亿)
        (1e17, "1 × 10¹⁷", "1 × 10¹⁷"),
        (2.5e17, "2.5 × 10¹⁷", "2.5 × 10¹⁷"),
    ],
)
def test_bound_compact_then_scientific(value, en, zh):
    with translation.override("en"):
        assert formatting.bound(value) == en
    with translation.override("zh-hans"):
        assert formatting.bound(value) == zh


def test_the_core_range_sentence_uses_the_same_format():
    with translation.override("zh-hans"):
        assert messages.field_error("input should be less than or equal to 1e+17") == "不能大于 1 × 10¹⁷"
    with translation.override("en"):
        assert "1e+17" not in messages.field_error("input should be less than or equal to 1e+17")
