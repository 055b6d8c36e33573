"""The report's labels of the stack's mechanisms (reports.stack_labels.MECHANISM_LABELS), in en + zh."""

from django.utils import translation

from estimator.layout.stack_profile import MECHANISMS, NOT_MECHANISMS
from reports.stack_labels import MECHANISM_LABELS, mechanism_rows


def test_every_label_names_a_mechanism_and_reads_in_chinese():
    assert set(MECHANISM_LABELS) <= set(MECHANISMS) | set(NOT_MECHANISMS)  # no stale key
    with translation.override("en"):
        english = {k: str(v) for k, v in MECHANISM_LABELS.items()}
    with translation.override("zh-hans"):
        untranslated = [k for k, v in MECHANISM_LABELS.items() if str(v) == english[k]]
    assert untranslated == []


def test_the_expert_tp_gather_shows_as_an_assumption():
    """engine 2.76.0's expert-TP gather and its combine bytes follow Megatron's dispatcher type and
    --moe-router-dtype: mechanisms a user overrides, shown as what the plan assumed."""
    detail = {"moe_expert_tp_gather": True, "moe_expert_tp_combine_bytes": 4.0}
    result = {"assumptions": [{"code": "assumption.stack", "detail": detail}]}
    with translation.override("en"):
        rows = dict(mechanism_rows(result))
        assert rows[str(MECHANISM_LABELS["moe_expert_tp_gather"])] == "yes"
        assert rows[str(MECHANISM_LABELS["moe_expert_tp_combine_bytes"])] == "4"
    with translation.override("zh-hans"):
        rows = dict(mechanism_rows(result))
    assert "该收集在合并侧每个元素的字节数（4：FP32 路由器的数据类型）" in rows and "是" in rows.values()
