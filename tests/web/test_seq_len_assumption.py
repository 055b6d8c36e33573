"""The sequence length a plan trains at is among the report's assumptions in both languages."""

from __future__ import annotations

import pytest

from tests.web.sweep_runs import zh_only


@pytest.mark.django_db
def test_the_report_lists_the_sequence_length_in_both_languages(client, make_estimate):
    est = make_estimate(
        data={
            "model": {"params": 7e9},
            "training": {"tokens": 1e11},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 64},
        }
    )
    en = client.get(f"/r/{est.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "sequence length (tokens a sample)" in en
    zh = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert "序列长度（每个样本的 token 数）" in zh
    zh_only("默认值：4,096 个 token；只给出模型规模时取所假定结构的长度（可在训练设置中修改；未经核实）")
    assert "默认值：4,096 个 token" in zh
