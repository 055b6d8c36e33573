"""Findings of the qa audit (a demanding new user, zh-hans and en): each with the test that failed
before its fix. Catalog facts: the Atlas 800T A2 holds Ascend 910B2 cards (servers.toml), the DGX
H100 H100s; Qwen3-30B-A3B is a mixture-of-experts model (its runners-up carry expert_tp/expert_dp)."""

from __future__ import annotations

import pytest

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from reports import working
from reports.services import create_estimate
from tests.web.test_pages import FORM

pytestmark = pytest.mark.django_db

H100_IN_ATLAS = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e11},
    "hardware": {"accelerator": "h100-sxm", "server": "atlas-800t-a2"},
    "cluster": {"cards": 8},
}


def test_a_card_in_another_familys_server_is_refused_on_the_server():
    with pytest.raises(ScenarioError) as info:
        estimate(H100_IN_ATLAS)
    (err,) = info.value.errors
    assert (err.field, err.code) == ("hardware.server", "server-not-for-accelerator")
    assert "dgx-h100" in err.params["servers"] and "atlas-800t-a2" not in err.params["servers"]
    # a server of the same family still plans (a 910B3 in the 910B2's Atlas 800T A2)
    same = {**H100_IN_ATLAS, "hardware": {"accelerator": "ascend-910b3", "server": "atlas-800t-a2"}}
    assert estimate(same)["result"]["compute"]["cards"] == 8


def test_the_form_says_the_wrong_server_on_its_field_in_chinese(client):
    page = client.post("/zh-hans/", {**FORM, "accelerator": "h100-sxm", "server": "atlas-800t-a2"})
    assert page.status_code == 400
    html = page.content.decode()
    assert "装的是" in html and "holds" not in html


def test_every_runner_up_column_of_a_moe_plan_has_a_label_in_chinese(client):
    moe = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "ascend-910b3"},
        "cluster": {"cards": 256},
    }
    est = create_estimate(data=moe, owner=None)
    keys = {k for r in est.result["layout"]["runners_up"] for k in r if not isinstance(r[k], dict | list)}
    assert {"expert_tp", "first_stage_layers"} <= keys
    assert [k for k in keys if working.column_label(k) == k] == []
    html = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert "专家张量并行" in html and ">expert_tp<" not in html and ">first_stage_layers<" not in html


PILOT = {"cards": 8, "seq_len": 8192, "global_batch_tokens": 4194304}


@pytest.mark.parametrize(
    ("extra", "code", "zh"),
    [
        ({"model": {"preset": "nope"}}, "unknown-catalog-entry", "目录中没有“nope”"),
        ({"hardware": {"accelerator": "nope"}}, "unknown-catalog-entry", "目录中没有“nope”"),
        ({"hardware": {"server": "nope"}}, "unknown-catalog-entry", "目录中没有“nope”"),
        ({"training": {"stack": "nope"}}, "unknown-catalog-entry", "目录中没有“nope”"),
        ({"cluster": {"target_days": 30}}, "cluster-exactly-one", "必须且只能给出一个"),
        ({"training": {"precision": "fp4"}}, "must-be-one-of", "必须是以下之一：bf16, fp16, fp8, fp32"),
        ({"cost": {"currency": "EUR"}}, "must-be-one-of", "必须是以下之一：USD, CNY"),
        # Llama 3.1 8B's default sequence is 8192 tokens: a batch of 1 token holds none
        ({"training": {"global_batch_tokens": 1}}, "batch-below-one-sequence", "至少要容纳一个序列"),
        # 4,194,304 tokens in a microsecond on 8 cards: far above any chip's peak
        (
            {"calibration": {"pilot": {**PILOT, "measured_step_time_s": 1e-6}}},
            "pilot-above-peak",
            "超过峰值",
        ),
        # the same batch in 1e5 s: about 5 tokens/s per card, far below every validated run
        (
            {"calibration": {"pilot": {**PILOT, "measured_step_time_s": 1e5}}},
            "pilot-far-below-model",
            "因此拒绝",
        ),
    ],
)
def test_core_refusals_typed_in_the_json_box_are_said_in_chinese(client, extra, code, zh):
    import json

    body = {**FORM, "extra": json.dumps(extra)}
    html = client.post("/zh-hans/", body).content.decode()
    assert zh in html, html[html.find("error") : html.find("error") + 600]
    doc = {"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e11}, "cluster": {"cards": 64}}
    for key, value in extra.items():
        doc[key] = {**doc.get(key, {}), **value}
    response = client.post("/api/v1/estimates", doc, content_type="application/json")
    assert response.status_code == 400
    assert code in [e.get("code") for e in response.json()["errors"]]


def test_the_diagnose_and_sweep_pages_in_chinese_say_profiler_and_stop_in_chinese(client):
    diagnose = client.get("/zh-hans/diagnose/").content.decode()
    assert "性能分析工具" in diagnose and "profiler" not in diagnose.split("<main", 1)[1]
    sweeps = client.get("/zh-hans/sweeps/").content.decode()
    assert "（含终点值）" in sweeps and "（含 stop）" not in sweeps


def test_the_levers_days_are_labelled_as_the_mean_they_are(client):
    """The levers' days (goodput.levers[].wall_clock_days) are means, like the days they save from:
    under the headline's median they are named so, not "Days with failures" a second time."""
    est = create_estimate(
        data={**H100_IN_ATLAS, "hardware": {"accelerator": "h100-sxm"}, "cluster": {"cards": 1024}}
    )
    assert est.result["goodput"]["levers"]
    for prefix, label in (("", "Days with failures (mean)"), ("/zh-hans", "含故障天数（均值）")):
        html = client.get(f"{prefix}/r/{est.share_token}/").content.decode()
        assert f"<th>{label}</th>" in html, prefix


def test_kv_is_in_the_glossary_so_a_zh_refusal_naming_kv_heads_counts_no_english_word():
    """'必须整除 8 个 KV 头' (TP 16 on Llama 3.1 8B's 8 KV heads) was counted as English: KV had no
    glossary entry."""
    from reports import glossary
    from tests.web.test_zh_words_browser import english_words

    assert english_words("必须整除 8 个 KV 头") == []
    assert "KV" in [term for term, _shown, _text in glossary.items()]


def test_the_diagnose_findings_in_chinese_count_no_english_word(client):
    """The findings name ECMP, PFC and NUMA (docs/diagnose.md); they are the glossary's now."""
    from tests.diagnosis.test_diagnose_web import FORM as DIAGNOSE_FORM
    from tests.web.test_zh_words_browser import english_words

    html = client.post("/zh-hans/diagnose/", DIAGNOSE_FORM).content.decode()
    main = html.split("<main", 1)[1].split("</main>", 1)[0]
    assert "ECMP" in main
    assert english_words("ECMP PFC NUMA") == []


NEVER = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 1e13},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 65536},
    "reliability": {"rate_scale": 50},
}


def test_a_run_that_never_finishes_is_said_in_chinese(client):
    """65,536 H100 at 50x the catalog's interruption rates meet one every minute or so, and each costs
    a restart of over 20 minutes: the core refuses it with code run-never-finishes and its figures."""
    response = client.post("/api/v1/estimates", NEVER, content_type="application/json")
    assert response.status_code == 400
    (err,) = response.json()["errors"]
    assert (err["field"], err["code"], err["params"]["cards"]) == (
        "cluster.cards",
        "run-never-finishes",
        65536,
    )
    assert err["params"]["every_s"] < err["params"]["cost_s"]
    form = {**FORM, "preset": "llama-3.1-405b", "accelerator": "h100-sxm", "cards": "65536", "tokens": "1e13"}
    html = client.post("/zh-hans/", {**form, "extra": '{"reliability": {"rate_scale": 50}}'}).content.decode()
    assert "训练永远无法完成：65,536 张卡" in html and "never finishes" not in html
