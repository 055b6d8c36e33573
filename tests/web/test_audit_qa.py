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
