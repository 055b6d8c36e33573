"""A count agrees with its noun: "1 card", "8 cards", "1 day" in English (ngettext; zh_Hans has one
form), for the sentences the core sends as code + params (reports.messages.PLURALS) and the days
and months every page shows (reports.formatting)."""

import pytest
from django.utils import translation

from reports import formatting as f
from reports import messages


@pytest.mark.parametrize(
    ("cards", "english"),
    [
        (1, "No parallel layout fits in HBM on 1 card. Add cards"),
        (8, "No parallel layout fits in HBM on 8 cards."),
    ],
)
def test_a_refusal_counts_its_cards(cards, english):
    with translation.override("en"):
        assert messages.render("no-feasible-layout", {"cards": cards}).startswith(english)
    with translation.override("zh-hans"):
        assert messages.render("no-feasible-layout", {"cards": cards}).startswith(f"{cards} 张卡上没有")


def test_a_fixed_layout_refusal_and_ignored_fields_count_too():
    params = {"cards": 1, "fixed": {"tp": 2}, "reasons": ["dp-not-integral"], "suggestions": []}
    with translation.override("en"):
        assert "possible on 1 card with the fixed fields (TP 2)" in messages.render(
            "no-possible-layout", params
        )
        one = messages.render("config-fields-ignored", {"count": 1, "fields": "rope_scaling"})
        two = messages.render("config-fields-ignored", {"count": 2, "fields": "a, b"})
    assert one == "1 config.json field the estimator does not read was ignored: rope_scaling."
    assert two == "2 config.json fields the estimator does not read were ignored: a, b."


def test_days_and_months_agree_with_their_count():
    with translation.override("en"):
        assert (f.days(1), f.days(1.0004), f.days(2), f.days(0.5)) == ("1 day", "1 day", "2 days", "0.5 days")
        assert (f.months(1), f.months(3)) == ("1 month", "3 months")
    with translation.override("zh-hans"):
        assert (f.days(1), f.days(2), f.months(1)) == ("1 天", "2 天", "1 个月")


def test_a_deadline_past_the_largest_cluster_reads_in_both_languages():
    params = {"target_days": 1.0, "tokens": 1e15, "cards": 45_651_083_384, "mfu": 0.65, "max_cards": 65_536}
    with translation.override("en"):
        text = messages.render("deadline-needs-too-many-cards", params, "fallback")
    assert text.startswith("Training ") and " in 1 day needs " in text and "65,536 cards" in text
    with translation.override("zh-hans"):
        text = messages.render("deadline-needs-too-many-cards", params, "fallback")
    assert "1 天" in text and "65,536 张卡" in text and "Training" not in text


def test_every_counted_sentence_has_both_forms_in_chinese():
    import re

    params = {"count": 1, "fields": "x", "fixed": {"tp": 2}, "reasons": [], "suggestions": []}
    params |= {"budget": 6e5, "capex": 3.6e6, "every_s": 60.0, "cost_s": 1320.0, "below": 8, "above": 16}
    params |= {"limit": 2_000_000}  # count-over-work-budget
    for code in messages.PLURALS:
        for n in (1, 3):
            with translation.override("zh-hans"):
                text = messages.render(code, {**params, "cards": n, "count": n}, "fallback")
            counted = messages.PLURALS[code][0]
            shown = code != "config-missing-fields"  # names the fields, not their count
            assert re.search(r"[\u4e00-\u9fff]", text) and (str(n) in text or not shown), (
                code,
                counted,
                text,
            )


@pytest.mark.django_db
@pytest.mark.parametrize(("budget", "servers"), [(5e5, "(1 server, "), (1.2e6, "(3 servers, ")])
def test_what_the_budget_buys_counts_its_servers(client, budget, servers):
    """An H100 server (8 cards) costs about USD 380k with its share of the network: 500k buys one,
    1.2M three."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 8},
        "cost": {"budget": budget, "currency": "USD"},
    }
    response = client.post("/api/v1/estimates", body, content_type="application/json")
    assert response.status_code == 201, response.content[:300]
    token = response.json()["share_url"].rstrip("/").rsplit("/", 1)[-1]
    page = client.get(f"/r/{token}/").content.decode()
    affords = page[page.index('id="budget-affords"') :][:400]
    assert servers in affords, affords
    zh = client.get(f"/zh-hans/r/{token}/").content.decode()
    assert "台服务器" in zh[zh.index('id="budget-affords"') :][:400]


GOODPUT = {
    "failures_counted": True,
    "compute_days": 2.0,
    "lost_days": {"restarts": 0.1},
    "mean_time_between_interruptions_h": 40.0,
    "checkpoint_interval_s": 1800.0,
    "checkpoint_mode": "sync",
    "restart_s": 600.0,
    "effective_training_time_ratio": 0.95,
    "wall_clock_days_p10": 2.0,
    "wall_clock_days_p90": 2.3,
}


@pytest.mark.parametrize(("n", "words"), [(1, "lost to 1 interruption ("), (3, "lost to 3 interruptions (")])
def test_the_days_with_failures_count_their_interruptions(n, words):
    from reports import goodput

    with translation.override("en"):
        assert words in goodput.why({"goodput": {**GOODPUT, "expected_interruptions": n}})
    with translation.override("zh-hans"):
        assert f"{n} 次中断" in goodput.why({"goodput": {**GOODPUT, "expected_interruptions": n}})


def test_a_fixed_layout_is_the_only_one_evaluated():
    from reports import working

    best = {"tp": 2, "pp": 1, "dp": 4, "ep": 1, "step_time_s": 1.5, "predicted_mfu": 0.41}
    one = {"parallelism": best, "layout": {"evaluated": 1, "feasible": 1}}
    many = {"parallelism": best, "layout": {"evaluated": 12, "feasible": 5}}
    with translation.override("en"):
        assert "it is the only layout evaluated (1 fits in memory)." in working.story(one)[0]
        assert "the fastest of the 12 layouts evaluated (5 fit in memory)." in working.story(many)[0]
    with translation.override("zh-hans"):
        assert "1 种布局中最快" in working.story(one)[0]


@pytest.mark.parametrize(("wait", "words"), [(1, "try again in 1 second."), (30, "try again in 30 seconds.")])
def test_the_throttled_page_counts_its_seconds(wait, words):
    from django.template.loader import render_to_string

    with translation.override("en"):
        assert words in render_to_string("reports/throttled.html", {"wait": wait})
    with translation.override("zh-hans"):
        assert f"{wait} 秒后重试" in render_to_string("reports/throttled.html", {"wait": wait})


FIXED = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e11},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 64},
}


@pytest.mark.parametrize(
    ("parallelism", "field", "english", "chinese"),
    [
        ({"tp": 3}, "parallelism.tp", "must divide the 32 attention heads", "必须整除 32 个注意力头"),
        ({"pp": 64}, "parallelism.pp", "cannot exceed the 32 layers", "不能超过 32 层"),
        ({"ep": 2}, "parallelism.ep", "expert parallelism needs a mixture-of-experts model", "混合专家"),
        (
            {"tp": 4, "pp": 2, "dp": 4},
            "parallelism.dp",
            "tp·pp·dp = 32 must equal cluster.cards = 64",
            "必须等于",
        ),
    ],
)
def test_a_fixed_field_the_model_cannot_take_reads_in_both_languages(parallelism, field, english, chinese):
    """Llama 3.1 8B: 32 heads, 8 KV heads, 32 layers, dense."""
    from estimator.errors import ScenarioError
    from estimator.plan.compose import estimate

    with pytest.raises(ScenarioError) as err:
        estimate({**FIXED, "parallelism": parallelism})
    (e,) = [e for e in err.value.errors if e.field == field]
    assert e.message == english
    with translation.override("en"):
        assert messages.scenario_error(e) == english
    with translation.override("zh-hans"):
        assert chinese in messages.scenario_error(e)


@pytest.mark.parametrize(
    ("config", "english", "chinese"),
    [
        (
            {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32},
            "model config is missing the required field vocab_size",
            "缺少必需字段：vocab_size",
        ),
        (
            {"hidden_size": 4096},
            "model config is missing the required fields num_hidden_layers, num_attention_heads, vocab_size",
            "缺少必需字段：num_hidden_layers",
        ),
    ],
)
def test_a_config_missing_fields_counts_them_in_both_languages(config, english, chinese):
    from estimator.errors import ScenarioError
    from estimator.plan.compose import estimate

    with pytest.raises(ScenarioError) as err:
        estimate({**FIXED, "model": config})
    (e,) = err.value.errors
    assert (e.field, e.message) == ("model", english)
    with translation.override("en"):
        assert messages.scenario_error(e) == english
    with translation.override("zh-hans"):
        assert chinese in messages.scenario_error(e)


def test_no_cluster_holds_the_model_in_chinese():
    with translation.override("zh-hans"):
        text = messages.render("no-cluster-holds-the-model", {"max_cards": 1024}, "fallback")
    assert "1,024 张卡" in text and "HBM" in text
