"""The software stack as an input people see (issue 20, item 5): the form chooses it with each
profile's name and what it implies (en and zh-Hans); the report, its workbook and the compare page
show the stack and the days under each profile."""

import io

import pytest
from django.utils import translation

from estimator.layout.stacks import STACKS
from reports.forms import EstimateForm
from reports.stack_labels import STACK_LABELS, stack_choices

MOE = {
    "model": {"preset": "qwen3-30b-a3b"},
    "training": {"tokens": 1e11, "seq_len": 4096},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 16},
}


def test_every_profile_has_a_name_and_the_cores_summary_in_both_languages():
    assert set(STACK_LABELS) == set(STACKS)
    with translation.override("en"):
        for sid, (_name, summary) in STACK_LABELS.items():
            assert str(summary) == STACKS[sid].summary, sid  # the web table translates the core's line
    with translation.override("zh-hans"):
        labels = dict(stack_choices())
        assert labels[""] == "按加速卡和模型取默认"
        assert labels["mindspeed-2025"].startswith("MindSpeed（昇腾）: 华为昇腾")


@pytest.mark.django_db
def test_the_form_offers_the_stacks_and_puts_the_choice_in_the_scenario(client):
    page = client.get("/").content.decode()
    assert 'value="megatron-core-moe-2025"' in page and "Megatron-Core MoE 2025 (DeepEP / HybridEP)" in page
    assert "软件栈" in client.get("/zh-hans/").content.decode()
    form = EstimateForm(
        {
            "model_source": "preset",
            "preset": "qwen3-30b-a3b",
            "accelerator": "h100-sxm",
            "tokens": "100B",
            "sizing": "cards",
            "cards": "16",
            "currency": "USD",
            "stack": "deepseek-dualpipe",
        }
    )
    assert form.is_valid(), form.errors
    assert form.scenario()["training"]["stack"] == "deepseek-dualpipe"
    assert EstimateForm.initial_from(form.scenario())["stack"] == "deepseek-dualpipe"


@pytest.mark.django_db
def test_report_workbook_and_compare_show_the_stack_and_its_days(client, make_estimate):
    from openpyxl import load_workbook

    default = make_estimate(data=MOE)
    dualpipe = make_estimate(data={**MOE, "training": {**MOE["training"], "stack": "deepseek-dualpipe"}})
    sensitivity = default.result["stack"]["sensitivity"]
    page = client.get(f"/r/{default.share_token}/").content.decode()
    assert "Software stack and its effect" in page
    assert "Megatron-Core MoE 2025 (DeepEP / HybridEP) (default for this accelerator and model)" in page
    assert "Days with DeepSeek DualPipe" in page and "(this plan)" in page
    zh = client.get(f"/zh-hans/r/{default.share_token}/").content.decode()
    assert "软件栈及其影响" in zh and "使用 DeepSeek DualPipe 的天数" in zh
    wb = load_workbook(io.BytesIO(client.get(f"/r/{default.share_token}/report.xlsx").content))
    cells = [c for sheet in wb.worksheets for r in sheet.iter_rows(values_only=True) for c in r]
    assert "Days with DeepSeek DualPipe" in cells
    result = dict(wb["Result"].iter_rows(min_row=2, values_only=True))
    assert result["stack.id"] == "megatron-core-moe-2025"
    assert result["stack.sensitivity.deepseek-dualpipe"] == pytest.approx(sensitivity["deepseek-dualpipe"])
    compare = client.get(f"/compare/?r={default.share_token}&r={dualpipe.share_token}").content.decode()
    assert "Software stack" in compare and "DeepSeek DualPipe" in compare


@pytest.mark.django_db
def test_the_api_returns_the_stack_and_its_sensitivity(api_client):
    body = api_client.post(
        "/api/v1/estimates",
        {**MOE, "parallelism": {"tp": 2, "ep": 8}, "training": {**MOE["training"], "stack": "pytorch-fsdp2"}},
        format="json",
    ).json()
    stack = body["result"]["stack"]
    assert stack["id"] == "pytorch-fsdp2" and stack["default"] is False
    assert stack["sensitivity"]["pytorch-fsdp2"] == body["result"]["compute"]["wall_clock_days"]
    assert "mindspeed-2025" not in stack["sensitivity"]
    # EP8 folded over TP2 x DP at expert-TP 1 or 2 (searched): ep·expert_tp divides tp·dp = 16
    par = body["result"]["parallelism"]
    assert par["expert_tp"] in (1, 2) and par["expert_dp"] == 16 // (8 * par["expert_tp"])


def test_every_layout_rule_has_words_in_both_languages():
    """The folding and stage-split rules a refusal names (estimator.plan.refusal.RULES) read in
    English and zh-Hans like the older ones."""
    from estimator.layout.enumeration import REASONS
    from estimator.plan.refusal import RULES
    from reports import messages

    assert set(REASONS) <= set(RULES) and set(RULES) == set(messages.RULES)
    with translation.override("zh-hans"):
        untranslated = [k for k, v in messages.RULES.items() if translation.gettext(v) == v]
    assert untranslated == []
    with translation.override("zh-hans"):
        assert translation.gettext(messages.RULES["ep-not-folding-into-tp-cp-dp"]).startswith("EP × 专家 TP")


def _cells(client, token):
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(client.get(f"/r/{token}/report.xlsx").content))
    return [c for sheet in wb.worksheets for r in sheet.iter_rows(values_only=True) for c in r]


@pytest.mark.django_db
def test_the_stacks_memory_mechanisms_are_assumptions_of_the_report_in_both_languages(client, make_estimate):
    """The memory and loss mechanisms (engine 2.27-2.32) are what the plan assumed: DeepSeek's
    profile recomputes the norms, MLA's up-projections and the experts' activation in every layer,
    caches in FP8/E5M6 and keeps Adam's moments in BF16 (DeepSeek-V3 report section 3.3.3); a
    scenario's override shows as the value the plan used."""
    dualpipe = make_estimate(data={**MOE, "training": {**MOE["training"], "stack": "deepseek-dualpipe"}})
    page = client.get(f"/r/{dualpipe.share_token}/").content.decode()
    assert "Recomputed in every layer&#x27;s backward, whatever the layout" in page
    assert "the norms, MLA&#x27;s up-projections, the experts&#x27; activation" in page
    assert "Low-precision activation cache (FP8 and E5M6, DeepSeek-V3)" in page
    zh = client.get(f"/zh-hans/r/{dualpipe.share_token}/").content.decode()
    assert "无论何种布局，每层反向时都重算" in zh and "归一化层, MLA 的上投影, 专家的激活函数" in zh
    assert "优化器一阶、二阶矩的存储格式" in zh
    cells = _cells(client, dualpipe.share_token)
    assert cells[cells.index("Adam's moments stored in") + 1] == "BF16"
    changed = {
        "stack_overrides": {"adam_moments": "bf16", "logits_dtype": "bf16", "cross_entropy": "mcore06"}
    }
    default = make_estimate(data={**MOE, "training": {**MOE["training"], **changed}})
    cells = _cells(client, default.share_token)
    assert cells[cells.index("Adam's moments stored in") + 1] == "BF16"
    assert cells[cells.index("Logits kept for the loss's backward in") + 1] == "BF16"
    assert cells[cells.index("Cross-entropy kernels") + 1] == "Megatron-Core 0.6 (unfused)"
    assert cells[cells.index("Recomputed in every layer's backward, whatever the layout") + 1] == "nothing"


@pytest.mark.django_db
def test_the_stacks_unfused_kernels_are_assumptions_of_the_report_in_both_languages(client, make_estimate):
    """MindSpeed-LLM scripts without --use-fused-rotary-pos-emb / --use-fused-swiglu run those kernels
    as eager ops, and --output-layer-slice-num copies the logits once more (engine 2.38.0): a
    scenario that says so reads it back as an assumption, the kernels by their names."""
    changed = {"stack_overrides": {"unfused_kernels": ["rope", "swiglu"], "output_layer_sliced": True}}
    estimate = make_estimate(data={**MOE, "training": {**MOE["training"], **changed}})
    cells = _cells(client, estimate.share_token)
    assert (
        cells[cells.index("Element-wise kernels run as separate PyTorch ops (unfused)") + 1] == "RoPE, SwiGLU"
    )
    assert cells[cells.index("Output layer computed in slices (one more copy of the logits)") + 1] == "yes"
    zh = client.get(f"/zh-hans/r/{estimate.share_token}/").content.decode()
    assert (
        "以独立 PyTorch 算子运行（未融合）的逐元素算子" in zh and "输出层分片计算（对数几率多复制一次）" in zh
    )
