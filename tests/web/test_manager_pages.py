"""Issue 11 without a browser: codes rendered in both languages (unknown codes fall back to the
core's English), form errors all at once on their fields, sizing by budget from the form, the
report's .xlsx against its JSON, the sweep builder's request, and no inline script in templates."""

import io
import re
from pathlib import Path

import pytest
from django.utils import translation

from reports import messages

ROOT = Path(__file__).resolve().parents[2]


def test_a_code_renders_in_both_languages_with_babel_params():
    item = {
        "code": "bubble-over-20pct",
        "severity": "warning",
        "message": "The pipeline bubble is 43% of the step with 4 micro-batches.",
        "suggestion": "…",
        "params": {
            "bubble": 0.43,
            "pp": 4,
            "low": 16,
            "high": 32,
            "bubble_low": 3 / 19,
            "bubble_high": 3 / 35,
        },
        "suggestion_code": "bubble-over-20pct.micro-batches",
    }
    with translation.override("en"):
        out = messages.advice(item, "USD")
        assert out["message"] == "The pipeline bubble is 43% of the step."
        assert out["suggestion"].startswith("Use 16-32 micro-batches per step (4-8 x PP=4): bubble 16%-9%")
    with translation.override("zh-hans"):
        out = messages.advice(item, "CNY")
        assert out["message"] == "流水线气泡占每步时间的 43%。" and out["severity_label"] == "警告"


def test_an_unknown_code_falls_back_to_the_cores_english():
    """The lead adds codes (fixed-layout-does-not-fit, stack-assumed, ...): one this catalogue has
    never seen still shows, in the core's English."""
    item = {"code": "brand-new-code", "severity": "info", "message": "Something new.", "params": {"x": 1}}
    with translation.override("zh-hans"):
        assert messages.warning(item, "CNY")["message"] == "Something new."
        # a known code with a missing parameter also falls back rather than crash
        assert messages.render("deadline-missed", {}, "English default") == "English default"
        stack = messages.render("stack-assumed", {"stack": "mindspeed"}, "x")
        assert "mindspeed" in stack and "软件栈" in stack


def test_every_code_the_core_emits_is_catalogued():
    from estimator.plan.advice import RULES

    for code in RULES:
        assert (
            code in messages.MESSAGES or code in messages.SAME_MESSAGE or f"{code}.set" in messages.MESSAGES
        ), code


def test_no_possible_layout_names_the_refusing_rule_in_chinese():
    from estimator.errors import FieldError

    err = FieldError(
        "parallelism",
        "English default",
        "no-possible-layout",
        {
            "cards": 8,
            "fixed": {"tp": 1, "pp": 2, "zero_stage": 3},
            "reasons": ["zero-stage-incompatible-with-pp"],
            "suggestions": [{"tp": 1, "pp": 2, "dp": 4, "zero_stage": 1, "predicted_mfu": 0.4}],
        },
    )
    with translation.override("zh-hans"):
        text = messages.scenario_error(err)
    assert "固定字段" in text and "ZeRO-2/3" in text and "PP 2" in text and "DP 4" in text
    assert "English default" not in text and "0.4" not in text


def test_range_errors_in_chinese():
    with translation.override("zh-hans"):
        assert messages.field_error("input should be less than or equal to 3650") == "不能大于 3,650"


def _post(client, url, **fields):
    data = {
        "model_source": "preset",
        "preset": "llama-3.1-70b",
        "accelerator": "ascend-910b2",
        "tokens": "500B",
        "sizing": "deadline",
        "target_days": "30",
        "currency": "CNY",
    }
    data.update(fields)
    return client.post(url, data)


@pytest.mark.django_db
def test_form_errors_all_at_once_on_their_fields_in_chinese(client):
    response = _post(client, "/zh-hans/", tokens="lots", target_days="5000", mfu="1.5", switch_ports="2")
    html = response.content.decode()
    assert response.status_code == 400
    summary = re.search(r'id="error-summary".*?</div>', html, re.S).group(0)
    for field in ("tokens", "target_days", "mfu", "switch_ports"):  # four errors in one round
        assert f'href="#field-{field}"' in summary
    assert "确保该值小于或等于3,650" in html  # Django's own zh-Hans range sentence, the limit in CLDR digits


@pytest.mark.django_db
def test_an_impossible_deadline_is_reported_on_the_deadline(client):
    html = _post(client, "/", target_days="0.001").content.decode()
    field = re.search(r'id="field-target_days".*?</div>', html, re.S).group(0)
    assert "largest cluster this network can build" in field  # the core's deadline-needs-too-many-cards
    assert 'id="field-switch_ports"' in html and "has-error" not in re.search(
        r'<div class="field[^"]*" id="field-switch_ports"', html
    ).group(0)


@pytest.mark.django_db
def test_sizing_by_budget_from_the_form(client):
    from reports.models import Estimate

    response = _post(client, "/", sizing="budget", budget="50000000")
    assert response.status_code == 302
    est = Estimate.objects.get()
    assert est.input["cluster"] == {"budget": 50000000.0} and "budget" not in est.input.get("cost", {})
    assert est.result["cost"]["capex"]["total"] <= 50e6 and est.result["budget"]["sized_by_budget"]


@pytest.mark.django_db
def test_currency_follows_the_language(client):
    assert re.search(r'<option value="CNY"[^>]*selected', client.get("/zh-hans/").content.decode())
    assert re.search(r'<option value="USD"[^>]*selected', client.get("/").content.decode())


@pytest.mark.django_db
def test_report_xlsx_has_the_same_figures_as_the_json(client, make_estimate):
    from openpyxl import load_workbook

    est = make_estimate(
        data={
            "model": {"preset": "llama-3.1-8b"},
            "training": {"tokens": 2e11},
            "cluster": {"cards": 64},
            "name": '=HYPERLINK("x")',
        }
    )
    response = client.get(f"/r/{est.share_token}/report.xlsx")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/vnd.openxml")
    wb = load_workbook(io.BytesIO(response.content))
    result = dict(wb["Result"].iter_rows(min_row=2, values_only=True))
    body = client.get(f"/r/{est.share_token}/report.json").json()["result"]
    assert result["compute.cards"] == body["compute"]["cards"]
    assert result["cost.capex.total"] == pytest.approx(body["cost"]["capex"]["total"])
    names = [row[1] for row in wb["Summary"].iter_rows(values_only=True) if row[0] == "Name"]
    assert names == ['\'=HYPERLINK("x")']  # user text cannot become a formula (reports.cells)


def test_sweep_builder_builds_the_json_request():
    from sweeps.builder import SweepBuilderForm

    form = SweepBuilderForm(
        {
            "preset": "llama-3.1-70b",
            "accelerator": "ascend-910b2",
            "tokens": "1T",
            "sizing": "cards",
            "cards": "1024",
            "mfu": "0.45",
            "currency": "CNY",
            "budget": "5e7",
            "axis1_field": "hardware.accelerator",
            "axis1_accelerators": ["ascend-910b2", "h100-sxm"],
            "axis2_field": "cluster.cards",
            "axis2_start": "512",
            "axis2_stop": "2048",
            "axis2_step": "512",
            "axis3_field": "training.tokens",
            "axis3_list": "500B, 1T",
        }
    )
    assert form.is_valid(), form.errors
    req = form.request()
    assert req["axes"] == {
        "hardware.accelerator": ["ascend-910b2", "h100-sxm"],
        "cluster.cards": {"start": 512, "stop": 2048, "step": 512},
        "training.tokens": [5e11, 1e12],
    }
    assert req["base"]["cost"] == {"currency": "CNY", "budget": 5e7}
    bad = SweepBuilderForm(
        {
            "preset": "llama-3.1-70b",
            "accelerator": "ascend-910b2",
            "tokens": "1T",
            "sizing": "cards",
            "cards": "64",
            "currency": "USD",
            "axis1_field": "efficiency.mfu",
            "axis1_list": "0.3, lots",
        }
    )
    assert not bad.is_valid() and "axis1_list" in bad.errors


def test_no_inline_script_or_handler_in_templates():
    """CSP-ready: JavaScript lives in static files; data goes in <script type="application/json">."""
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        assert not re.search(r"\son[a-z]+=\"", text), path
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or "application/json" in tag, (path, tag)


@pytest.mark.django_db
def test_jargon_carries_glossary_tooltips_in_the_readers_language(client, make_estimate):
    est = make_estimate()
    html = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    tips = re.findall(r'<abbr class="term" title="([^"]+)"[^>]*>(\w+)</abbr>', html)
    assert {"MFU", "TP", "HBM"} <= {word for _t, word in tips}
    assert all(re.search(r"[\u4e00-\u9fff]", title) for title, _w in tips)  # the definitions are Chinese
    assert 'id="glossary"' in html


def test_the_leads_fixed_layout_refusal_renders_in_chinese():
    """fixed-layout-does-not-fit (params overflow_gb, total_gb, hbm_gb, largest_term, suggestions):
    Llama 3.1 70B with TP 1, PP 1 and no ZeRO on 64-GB cards needs >1 TB per card (16 B/param of
    model states alone: 70.6e9 x 16 B = 1,130 GB); the plan is refused and must say so in Chinese."""
    from estimator.errors import ScenarioError
    from estimator.plan.compose import estimate

    with pytest.raises(ScenarioError) as info:
        estimate(
            {
                "model": {"preset": "llama-3.1-70b"},
                "training": {"tokens": 5e11},
                "hardware": {"accelerator": "ascend-910b2"},
                "cluster": {"cards": 64},
                "parallelism": {"tp": 1, "pp": 1, "zero_stage": 0},
            }
        )
    (err,) = info.value.errors
    assert err.code == "fixed-layout-does-not-fit" and err.params["total_gb"] > 1130
    with translation.override("zh-hans"):
        text = messages.scenario_error(err)
    assert text.startswith("指定的布局") and "优化器状态" in text and "64.0 GB" in text


@pytest.mark.django_db
def test_comparison_of_910b_nodes_and_910c_supernodes_explains_the_step_time_by_domain(client, make_estimate):
    """Issue 13: the same model on 2,304 910B (8-card nodes) and 2,304 910C (CloudMatrix 384) side by
    side, with the speed difference split into chip and domain size, in both languages."""

    def plan(accelerator):
        return make_estimate(
            data={
                "model": {"preset": "deepseek-v3"},
                "hardware": {"accelerator": accelerator},
                "training": {"tokens": 1e12},
                "cluster": {"cards": 2304},
            }
        )

    nodes, supernodes = plan("ascend-910b2"), plan("ascend-910c")
    url = f"/compare/?r={nodes.share_token}&r={supernodes.share_token}"
    english = client.get(url).content.decode()
    assert "as fast as the nodes" in english and "-card domain gives the other" in english
    chinese = client.get("/zh-hans" + url).content.decode()
    assert "超节点方案的训练速度是普通节点方案的" in chinese
    assert "as fast as the nodes" not in chinese


def test_the_chosen_micro_batches_say_the_layouts_bubble_as_its_table_does():
    params = {"pp": 2, "low": 8, "high": 16, "bubble_low": 1 / 9, "bubble_high": 1 / 17, "micro_batches": 14}
    new = {**params, "layout_bubble": 0.00853}  # interleaved over 8 virtual stages
    with translation.override("en"):
        text = messages.render("start.micro_batches.chosen", new, "x")
        assert text.endswith("The chosen layout runs 14 (bubble 0.9%).") and "11% at 8" in text
    with translation.override("zh-hans"):
        assert messages.render("start.micro_batches.chosen", new, "x").endswith(
            "所选布局使用 14 个（气泡 0.9%）。"
        )
        # a result stored before the rename (params.bubble) still reads in Chinese
        old = messages.render("start.micro_batches.chosen", {**params, "bubble": 1 / 15}, "English default")
        assert old.endswith("（气泡 6.7%）。"), old
