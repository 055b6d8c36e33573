"""The browser pages without a browser: form, report, downloads, recompute, validation, languages."""

import csv
import io
import json
import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from estimator import ENGINE_VERSION
from reports.models import Estimate

pytestmark = pytest.mark.django_db

FORM = {
    "model_source": "preset",
    "preset": "llama-3.1-8b",
    "accelerator": "ascend-910b2",
    "tokens": "200B",
    "sizing": "cards",
    "cards": "64",
    "currency": "USD",
    "name": "From the form",
}


def test_form_renders_with_folded_advanced_sections(client):
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="tokens"' in html and 'name="preset"' in html and 'name="hf_config"' in html
    assert html.count('<details class="advanced"') >= 5
    assert '<details class="advanced" open' not in html  # folded by default


def test_form_post_without_javascript_redirects_to_the_report(client):
    response = client.post("/", FORM)
    assert response.status_code == 302
    est = Estimate.objects.get()
    assert response["Location"] == f"/r/{est.share_token}/"
    assert est.input["training"]["tokens"] == 2e11 and est.input["cluster"] == {"cards": 64}
    assert est.name == "From the form"


def test_form_builds_the_scenario_from_every_section(client):
    data = {
        **FORM,
        "sizing": "deadline",
        "target_days": "20",
        "cards": "",
        "budget": "5e7",
        "tp": "2",
        "zero_stage": "1",
        "rail_optimized": "no",
        "pue": "1.2",
        "precision": "bf16",
        "extra": '{"serving": {"context_len": 4096}}',
    }
    assert client.post("/", data).status_code == 302
    doc = Estimate.objects.get().input
    assert doc["cluster"] == {"target_days": 20.0}
    assert doc["cost"]["budget"] == 5e7 and doc["cost"]["pue"] == 1.2
    assert doc["parallelism"] == {"tp": 2, "zero_stage": 1}
    assert doc["network"] == {"rail_optimized": False}
    assert doc["serving"] == {"context_len": 4096}


def _field_errors(html: str, name: str) -> str:
    match = re.search(rf'<div class="[^"]*" id="field-{name}">.*?</div>', html, re.S)
    assert match, name
    return match.group(0)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tokens": "-5"}, "tokens"),  # the form's own check
        ({"tokens": "lots"}, "tokens"),
        ({"tokens": "1e30"}, "tokens"),  # the core's check, mapped back to the field
        ({"sizing": "cards", "cards": ""}, "cards"),
        ({"mfu": "3"}, "mfu"),
        ({"model_source": "config", "hf_config": "{not json"}, "hf_config"),
        ({"model_source": "config", "hf_config": '{"hidden_size": 4096}'}, "hf_config"),
        ({"extra": '{"training": {"colour": 1}}'}, "extra"),
    ],
)
def test_errors_show_next_to_the_field(client, change, field):
    response = client.post("/", {**FORM, **change})
    assert response.status_code == 400
    block = _field_errors(response.content.decode(), field)
    assert "has-error" in block and 'class="errors"' in block
    assert not Estimate.objects.exists()


def test_pasted_hugging_face_config(client):
    config = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "torch_dtype": "bfloat16",
        "rope_scaling": {"factor": 8.0},
        "hidden_act": "silu",
        "tie_word_embeddings": False,
    }
    response = client.post("/", {**FORM, "model_source": "config", "hf_config": json.dumps(config)})
    assert response.status_code == 302, response.content.decode()[:3000]
    estimate = Estimate.objects.get()
    model = estimate.scenario["model"]  # the normalized scenario keeps only what the estimator reads
    assert model["hidden_size"] == 4096 and "architectures" not in model and "torch_dtype" not in model
    # rope_scaling is read since engine 2.37.0 (its rope_type selects the stack's unfused RoPE)
    assert estimate.result["model"]["ignored_fields"] == ["architectures", "torch_dtype"]


HF_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


@pytest.mark.parametrize(
    ("name", "total"),
    # published totals: Llama 3.1 8B model card 8.03B; Qwen3-30B-A3B card 30.5B; DeepSeek-V3 report 671B
    [("llama-3.1-8b", 8.03e9), ("qwen3-30b-a3b", 30.5e9), ("deepseek-v3", 671e9)],
)
def test_the_published_config_json_files_plan_through_the_form(client, name, total):
    """The whole file pasted as it is; the report lists what was ignored."""
    text = (HF_CONFIGS / f"{name}.json").read_text(encoding="utf-8")
    form = {**FORM, "model_source": "config", "hf_config": text, "accelerator": "h100-sxm", "cards": "256"}
    response = client.post("/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    estimate = Estimate.objects.get()
    assert estimate.result["model"]["total_params"] == pytest.approx(total, rel=0.02)
    ignored = estimate.result["model"]["ignored_fields"]
    assert "architectures" in ignored and not set(ignored) & set(estimate.scenario["model"])
    html = client.get(response["Location"]).content.decode()
    assert "config.json" in html and "architectures" in html


def test_a_refused_layout_shows_on_the_parallelism_fields(client):
    """TP 8 x PP 2 with ZeRO-3 on Megatron-Core: ZeRO-2/3 does not combine with pipeline stages,
    so no layout passes the rules; the refusal shows on the layout fields the user filled."""
    response = client.post("/", {**FORM, "tp": "8", "pp": "2", "zero_stage": "3"})
    assert response.status_code == 400
    block = _field_errors(response.content.decode(), "tp")
    assert "has-error" in block and "ZeRO-2/3 does not combine with pipeline parallelism" in block
    assert "Nearest accepted layouts" in block
    assert not Estimate.objects.exists()


def test_report_page_headline_charts_and_sections(client, make_estimate):
    est = make_estimate()
    response = client.get(f"/r/{est.share_token}/")
    assert response.status_code == 200
    html = response.content.decode()
    for key in ("cards", "servers", "days", "capex", "power"):
        assert f'id="headline-{key}"' in html
    assert html.index('id="headline-cards"') < html.index('id="charts"')  # headline first
    assert html.count('class="why"') >= 5
    for chart in (
        "chart-step-time",
        "chart-memory",
        "chart-cards-days",
        "chart-cost",
        "chart-network",
        "chart-storage",
    ):
        assert f'id="{chart}-data"' in html, chart
    assert "/static/vendor/plotly/plotly.min.js" in html
    assert "cdn.plot.ly" not in html and "cdn.jsdelivr" not in html
    assert 'id="assumptions"' in html and 'id="layout"' in html
    assert f"?copy={est.share_token}" in html and f"/r/{est.share_token}/recompute/" in html
    assert 'media="print"' in html


def test_plotly_js_is_served_from_static(client):
    """From the installed plotly package through the static pipeline (WhiteNoise), never a CDN."""
    assert finders.find("vendor/plotly/plotly.min.js")
    assert finders.find("css/print.css")
    response = client.get("/static/vendor/plotly/plotly.min.js")
    assert response.status_code == 200
    assert b"plotly" in b"".join(response.streaming_content)[:2000].lower()


def test_report_is_read_only(client, make_estimate):
    est = make_estimate()
    assert client.post(f"/r/{est.share_token}/").status_code == 405
    assert client.get("/r/no-such-token/").status_code == 404


def test_json_download(client, make_estimate):
    est = make_estimate()
    response = client.get(f"/r/{est.share_token}/report.json")
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    body = json.loads(response.content)
    assert body["result"] == est.result and body["scenario"] == est.scenario and body["input"] == est.input


def test_csv_download(client, make_estimate):
    est = make_estimate()
    response = client.get(f"/r/{est.share_token}/report.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0] == ["part", "field", "value", "currency"]
    values = {(r[0], r[1]): r[2:] for r in rows[1:]}
    assert float(values[("result", "compute.cards")][0]) == est.result["compute"]["cards"]
    assert values[("result", "compute.cards")][1] == ""  # a count has no currency
    capex = est.result["cost"]["capex"]["total"]
    assert values[("result", "cost.capex.total")] == [f"{capex:.2f}", "USD"]  # a decimal amount, cents
    assert values[("meta", "engine_version")] == [est.engine_version, ""]


def test_edit_a_copy_prefills_the_form(client, make_estimate):
    est = make_estimate(
        data={
            "name": "copy me",
            "model": {"preset": "llama-3.1-8b"},
            "training": {"tokens": 2e11},
            "cluster": {"cards": 64},
            "serving": {"context_len": 4096},
        }
    )
    html = client.get(f"/?copy={est.share_token}").content.decode()
    assert 'value="copy me (copy)"' in html  # the copy is named as one
    assert 'value="200B"' in html  # 2e11 tokens as a person types them, not "2e+11"
    assert "“copy me”" in html
    html = client.get(f"/zh-hans/?copy={est.share_token}").content.decode()
    assert 'value="2000亿"' in html
    assert re.search(r'<option value="llama-3.1-8b"[^>]*selected', html)
    assert "context_len" in html  # what the form has no field for is kept in the JSON box


def test_recompute_page(client, make_estimate):
    est = make_estimate()
    Estimate.objects.filter(pk=est.pk).update(
        result={**est.result, "compute": {**est.result["compute"], "cards": 32}}
    )
    html = client.get(f"/r/{est.share_token}/recompute/").content.decode()
    assert 'id="diff"' in html and 'class="changed"' in html and "+100.0%" in html


def test_recompute_page_names_both_engine_versions(client, make_estimate):
    est = make_estimate()
    Estimate.objects.filter(pk=est.pk).update(engine_version="1.0.0")
    html = client.get(f"/r/{est.share_token}/recompute/").content.decode()
    assert "engine 1.0.0" in html and f"engine {ENGINE_VERSION}" in html
    # today's engine rejects the stored input: the versions are still named
    Estimate.objects.filter(pk=est.pk).update(input={**est.input, "model": {"preset": "gone"}})
    html = client.get(f"/r/{est.share_token}/recompute/").content.decode()
    assert "engine 1.0.0" in html and f"engine {ENGINE_VERSION}" in html and "model.preset" in html


def test_validation_page(client):
    response = client.get("/validation/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="validation-summary"' in html and "megatron" in html.lower()


def test_validation_page_survives_an_unreachable_cache(client, monkeypatch):
    """Redis restarting must not take the page down: the rows are computed without the cache."""
    from reports import pages

    class Down:
        def get(self, *args, **kwargs):
            raise ConnectionError("cache unreachable")

        set = get

    monkeypatch.setattr(pages, "cache", Down())
    response = client.get("/validation/")
    assert response.status_code == 200 and 'id="validation-summary"' in response.content.decode()


def test_chinese_pages(client, make_estimate):
    est = make_estimate()
    html = client.get("/zh-hans/").content.decode()
    assert 'lang="zh-hans"' in html and "规划训练集群" in html
    html = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert "卡数" in html and "天" in html


def test_language_switch_keeps_the_page(client, make_estimate):
    est = make_estimate()
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": f"/r/{est.share_token}/"})
    assert response.status_code == 302 and response["Location"] == f"/zh-hans/r/{est.share_token}/"


def test_my_estimates_page(client, user, make_estimate):
    make_estimate(owner=user)
    assert "Sign in" in client.get("/estimates/").content.decode()
    client.force_login(user)
    html = client.get("/estimates/").content.decode()
    assert "8B test plan" in html


def test_form_posts_share_the_api_throttle(client):
    from django.test import override_settings

    from tests.web.test_throttling import _rates

    with override_settings(REST_FRAMEWORK=_rates("2/minute", "100/minute")):
        assert [client.post("/", FORM).status_code for _ in range(3)] == [302, 302, 429]
        assert client.get("/").status_code == 200  # reading the form costs nothing


def test_report_renders_whatever_sections_exist(client):
    """An old or partial result (no bill of materials, no layout) still renders."""
    est = Estimate.objects.create(
        input={"model": {"preset": "llama-3.1-8b"}},
        scenario={"model": {"preset": "llama-3.1-8b"}},
        result={"compute": {"cards": 8, "nodes": 1, "wall_clock_days": 3.5}},
        engine_version="0.1",
        catalog_version="old",
    )
    html = client.get(f"/r/{est.share_token}/").content.decode()
    assert 'id="headline-cards"' in html and 'id="headline-capex"' not in html and 'id="working"' in html
    assert client.get(f"/r/{est.share_token}/report.csv").status_code == 200


def test_links_open_in_the_readers_language(client, make_estimate):
    est = make_estimate()
    url = f"/r/{est.share_token}/"
    assert client.get(url).status_code == 200  # no preference: English
    response = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert response.status_code == 302 and response["Location"] == f"/zh-hans{url}"
    client.cookies["django_language"] = "en"  # chose English with the switcher: stays English
    assert client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN").status_code == 200
    assert (
        client.get("/api/v1/catalog", HTTP_ACCEPT_LANGUAGE="zh-CN").status_code == 200
    )  # the API is not redirected


ARTICLE_50M = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cost": {"currency": "CNY", "budget": 5e7},
}


def test_what_the_budget_buys_reads_the_same_in_the_three_reports(client, make_estimate):
    """The article's example with 50 M CNY, planned for 30 days, for 5 days and by the budget: one
    figure for what the budget buys (the budget-sized plan's 256 cards and its days: the fastest of
    the sizes it buys; it buys up to 264, which train slower) in all three."""
    sentences = []
    for cluster in ({"target_days": 30}, {"target_days": 5}, {"budget": 5e7}):
        estimate = make_estimate(data={**ARTICLE_50M, "cluster": cluster})
        html = client.get(estimate.get_absolute_url()).content.decode()
        match = re.search(r'<p class="affords" id="budget-affords">(.*?)(<a |</p>)', html, re.S)
        assert match, cluster
        sentences.append(" ".join(match.group(1).split()))
    assert len(set(sentences)) == 1 and "buys 256 cards" in sentences[0], sentences
    assert "It buys up to 264 cards, but those train slower." in sentences[0]


def test_a_copy_planned_by_budget_is_named_for_what_it_is(client, make_estimate):
    original = make_estimate(data={**ARTICLE_50M, "name": "70B in 30 days", "cluster": {"target_days": 30}})
    html = client.get(f"/?copy={original.share_token}&sizing=budget").content.decode()
    assert 'value="70B in 30 days, sized by its budget"' in html


def test_a_copy_of_an_unnamed_report_never_carries_its_share_token(client, make_estimate):
    # the token is the original's read key: a copy named after it would hand it to whoever sees the copy
    original = make_estimate(data={**ARTICLE_50M, "cluster": {"target_days": 30}})
    assert not original.name
    html = client.get(
        f"/?copy={original.share_token}&sizing=budget", HTTP_ACCEPT_LANGUAGE="en"
    ).content.decode()
    assert 'value="Training cluster plan, sized by its budget"' in html
    assert "a copy of “Training cluster plan”" in html
    assert html.count(original.share_token) == html.count(f"copy={original.share_token}")  # in no text


def test_what_the_budget_buys_is_said_in_the_median_days_of_that_plans_own_headline(client, make_estimate):
    """The budget sentence's days are the budget-sized plan's headline days with failures: its
    median (budget.affords.days_p50 = that plan's goodput.wall_clock_days_p50), not the mean."""
    from reports import formatting

    by_budget = make_estimate(data={**ARTICLE_50M, "cluster": {"budget": 5e7}})
    deadline = make_estimate(data={**ARTICLE_50M, "cluster": {"target_days": 30}})
    affords = deadline.result["budget"]["affords"]
    assert affords["days_p50"] == by_budget.result["goodput"]["wall_clock_days_p50"]
    assert affords["days"] == by_budget.result["goodput"]["wall_clock_days"]  # the mean, kept
    html = client.get(deadline.get_absolute_url()).content.decode()
    sentence = re.search(r'id="budget-affords">(.*?)</p>', html, re.S).group(1)
    assert f"in {formatting.days(affords['days_p50'])}." in " ".join(sentence.split())
