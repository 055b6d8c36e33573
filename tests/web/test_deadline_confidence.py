"""cluster.deadline_confidence on the web: the form asks it in percent (50-99, blank: sized at the
planned MFU) and writes the fraction; the report says what the cards were sized for, in English and
Chinese, with no English word on the Chinese page; the API refuses it without a deadline in the one
error shape; a sweep sized for the chance shows each row's chance of missing; its field error, the
sweep's work-budget refusal and the warning deadline-confidence-missed read in the reader's language
without field paths. The sweep pages sized for the chance are tests/web/test_sweep_confidence_pages.py."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from django.utils import translation

from estimator.errors import FieldError
from estimator.plan.compose import estimate
from reports import messages
from reports.forms import EstimateForm
from reports.models import Estimate
from tests.web.sweep_runs import zh_only
from tests.web.test_api_errors import URL, errors_of
from tests.web.test_pages import FORM, _field_errors
from tests.web.test_zh_words_browser import english_words

DEADLINE_FORM = {**FORM, "preset": "llama-3.1-70b", "tokens": "500B", "sizing": "deadline", "cards": ""}
DEADLINE_FORM["target_days"] = "30"
CONFIDENT = {
    "name": "70B 稠密模型",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"target_days": 30, "deadline_confidence": 0.9},
    "cost": {"currency": "CNY"},
}


def _compute_of(scenario: dict) -> dict:
    return estimate(scenario)["result"]["compute"]


def _form(**change) -> EstimateForm:
    return EstimateForm(data={**DEADLINE_FORM, **change})


# --- the form ----------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("typed", "fraction"), [("90", 0.9), ("50", 0.5), ("99", 0.99), ("97.5", 0.975)])
def test_the_form_writes_the_percentage_as_a_fraction(typed, fraction):
    form = _form(deadline_confidence=typed)
    assert form.is_valid(), form.errors
    assert form.scenario()["cluster"] == {"target_days": 30.0, "deadline_confidence": fraction}


@pytest.mark.django_db
def test_blank_or_another_sizing_leaves_the_field_out():
    blank = _form(deadline_confidence="")
    assert blank.is_valid(), blank.errors
    assert blank.scenario()["cluster"] == {"target_days": 30.0}
    by_cards = _form(sizing="cards", cards="64", deadline_confidence="90")  # shown with the deadline only
    assert by_cards.is_valid(), by_cards.errors
    assert by_cards.scenario()["cluster"] == {"cards": 64}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("typed", "en", "zh"),
    [
        ("49.9", "greater than or equal to 50", "大于或等于50"),
        ("100", "less than or equal to 99", "小于或等于99"),
        ("0.9", "greater than or equal to 50", "大于或等于50"),  # a fraction typed in a percent field
    ],
)
def test_the_form_refuses_a_percentage_outside_50_to_99_in_the_readers_language(typed, en, zh):
    for lang, needle in (("en", en), ("zh-hans", zh)):
        with translation.override(lang):
            form = _form(deadline_confidence=typed)
            assert not form.is_valid()
            (error,) = form.errors["deadline_confidence"]
        assert needle in error, (lang, error)


@pytest.mark.django_db
def test_the_field_is_part_of_the_deadline_sizing_and_posts_the_fraction(client):
    html = client.get("/").content.decode()
    deadline = re.search(
        r'<div class="when when-deadline">(.*?)</div>\s*<div class="when when-cards">', html, re.S
    )
    assert deadline and 'name="deadline_confidence"' in deadline.group(1)
    assert 'min="50"' in deadline.group(1) and 'max="99"' in deadline.group(1)
    assert "Chance of meeting the deadline (%)" in deadline.group(1)
    assert "按期完成的概率（%）" in client.get("/zh-hans/").content.decode()
    response = client.post("/", {**DEADLINE_FORM, "deadline_confidence": "90"})
    assert response.status_code == 302, _field_errors(response.content.decode(), "deadline_confidence")
    assert Estimate.objects.get().input["cluster"] == {"target_days": 30.0, "deadline_confidence": 0.9}


@pytest.mark.django_db
def test_the_form_shows_a_refused_percentage_next_to_the_field(client):
    response = client.post("/zh-hans/", {**DEADLINE_FORM, "deadline_confidence": "100"})
    assert response.status_code == 400
    block = _field_errors(response.content.decode(), "deadline_confidence")
    assert "has-error" in block and "小于或等于99" in block
    assert not Estimate.objects.exists()


@pytest.mark.django_db
def test_edit_a_copy_of_a_confident_plan_prefills_the_percentage(client, make_estimate):
    est = make_estimate(data=CONFIDENT)
    html = client.get(f"/?copy={est.share_token}").content.decode()
    assert re.search(r'<input type="number" name="deadline_confidence" value="90"', html)
    assert "deadline_confidence" not in html.split('name="extra"')[1].split("</textarea>")[0]


def test_edit_a_copy_shows_the_fraction_as_a_percentage():
    initial = EstimateForm.initial_from({"cluster": {"target_days": 30, "deadline_confidence": 0.9}})
    assert initial["deadline_confidence"] == 90 and initial["sizing"] == "deadline"
    assert "extra" not in initial  # nothing left over for the JSON box
    initial = EstimateForm.initial_from({"cluster": {"target_days": 30, "deadline_confidence": 0.975}})
    assert initial["deadline_confidence"] == 97.5


@pytest.mark.django_db
def test_the_core_refusal_without_a_deadline_shows_on_the_json_box_in_chinese(client):
    extra = json.dumps({"cluster": {"deadline_confidence": 0.9}})
    response = client.post("/zh-hans/", {**FORM, "extra": extra})  # sized by cards: no deadline
    assert response.status_code == 400
    block = _field_errors(response.content.decode(), "extra")
    assert "需要给出期限（天）" in block


# --- the messages ------------------------------------------------------------------------------


def test_the_field_error_reads_in_both_languages():
    err = FieldError(
        "cluster.deadline_confidence",
        "needs cluster.target_days: it is the chance of finishing by a deadline",
        "confidence-needs-deadline",
    )
    with translation.override("en"):
        assert (
            messages.scenario_error(err)
            == "needs a deadline in days: it is the chance of finishing by the deadline"
        )
    with translation.override("zh-hans"):
        zh_only(messages.scenario_error(err))


def test_the_warning_that_no_size_reaches_the_chance_reads_in_both_languages():
    item = {
        "code": "deadline-confidence-missed",
        "severity": "warning",
        "message": "No cluster size reaches a 99% chance ... (cluster.deadline_confidence) ...",
        "params": {
            "confidence": 0.99,
            "probability": 0.25,
            "days": 31.4,
            "target_days": 30.0,
            "cards": 38400,
        },
    }
    with translation.override("en"):
        text = messages.warning(item, "USD")["message"]
    assert text.startswith(
        "No cluster size reaches a 99% chance of meeting the 30 days target: the plan keeps 38,400 "
        "cards, 31.4 days with a 25.0% chance of missing it (the fastest the sizing found)."
    ), text
    assert "cluster." not in text
    with translation.override("zh-hans"):
        zh = messages.warning(item, "CNY")["message"]
    zh_only(zh)
    assert "99%" in zh and "38,400 张卡" in zh and "25.0%" in zh, zh


def test_the_warning_that_a_plan_likely_misses_reads_in_both_languages():
    item = {
        "code": "deadline-likely-missed",
        "severity": "info",
        "message": "Sized at the planned MFU ... set cluster.deadline_confidence (for example 0.9).",
        "params": {"probability": 0.5954, "target_days": 90.0},
    }
    with translation.override("en"):
        text = messages.warning(item, "USD")["message"]
    assert text == (
        "Sized at the planned MFU the plan meets the 90 days target, but it misses it with a 59.5% "
        "chance (the MFU range counted, and the interruptions where failures are). To size for the "
        "chance of meeting it, give a chance of meeting the deadline (for example 90%)."
    ), text
    with translation.override("zh-hans"):
        zh = messages.warning(item, "CNY")["message"]
    zh_only(zh)
    assert "59.5%" in zh and "90%" in zh, zh


# --- the report --------------------------------------------------------------------------------

_SKIPPED = {"script", "style", "noscript", "template", "code"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _MainText(HTMLParser):
    """The words the page shows in <main>, without what is typed (<code>), quoted as published
    (lang="en"), hidden, folded (a closed <details> shows its <summary> only) or scripted: what the
    browser test (test_zh_words_browser) reads with innerText, for the runs without Chromium."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, bool, bool]] = []  # (tag, not shown, a closed <details>)
        self.parts: list[str] = []
        self.depth = 0

    def _hidden(self) -> bool:
        return bool(self.open) and (self.open[-1][1] or self.open[-1][2])

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in _VOID:
            return
        a = dict(attrs)
        parent = self.open[-1] if self.open else ("", False, False)
        hidden = parent[1] or (parent[2] and tag != "summary")
        quoted = self.depth > 0 and a.get("lang") == "en"  # inside <main>: not <html lang="en">
        hidden = hidden or tag in _SKIPPED or quoted or "hidden" in a
        self.open.append((tag, hidden, tag == "details" and "open" not in a))
        self.depth += tag == "main"

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop()[0] != tag:
            pass
        self.depth -= tag == "main"

    def handle_data(self, data: str) -> None:
        if self.depth and not self._hidden():
            self.parts.append(data)


def _main_text(html: str) -> str:
    parser = _MainText()
    parser.feed(html)
    return " ".join(parser.parts)


def _cards_why(html: str) -> str:
    match = re.search(r'id="headline-cards">.*?<p class="why">(.*?)</p>', html, re.S)
    assert match
    return match.group(1)


@pytest.mark.django_db
def test_the_report_says_what_the_cards_were_sized_for_in_both_languages(client, make_estimate):
    est = make_estimate(data=CONFIDENT)
    compute = est.result["compute"]
    miss = compute["deadline_miss_probability"]
    assert compute["deadline_confidence"] == 0.9 and compute["meets_target"] is True
    assert miss <= 0.1  # a 90% chance of meeting it: at most 10% of missing it
    shown = f"{miss * 100:.1f}%"
    en = client.get(f"/r/{est.share_token}/").content.decode()
    assert _cards_why(en).startswith(
        f"Sized for a 90% chance of meeting the 30-day deadline; {shown} chance of missing it."
    ), _cards_why(en)
    assert "Chance of meeting the deadline (sized for)" in en
    zh = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert _cards_why(zh).startswith(f"按 90% 的概率在 30 天期限内完成确定规模；错过期限的概率为 {shown}。")
    words = english_words(_main_text(zh))
    assert words == [], sorted(set(words))


@pytest.mark.django_db
def test_a_chance_no_size_reaches_is_said_so_on_the_cards_and_warned_in_both_languages(client, make_estimate):
    """70B on 5T tokens in 30 days with 99%: the sizing keeps its fastest size, which misses more often."""
    data = {
        **CONFIDENT,
        "training": {"tokens": 5e12},
        "cluster": {"target_days": 30, "deadline_confidence": 0.99},
    }
    est = make_estimate(data=data)
    compute = est.result["compute"]
    miss = compute["deadline_miss_probability"]
    assert compute["meets_target"] is False and miss > 0.01  # more than 1 - 0.99
    assert "deadline-confidence-missed" in [w["code"] for w in est.result["warnings"]]
    shown = f"{miss * 100:.1f}%"
    en = client.get(f"/r/{est.share_token}/").content.decode()
    assert _cards_why(en).startswith(
        f"No cluster size reaches a 99% chance of meeting the 30-day deadline; this one has a {shown} "
        "chance of missing it."
    ), _cards_why(en)
    assert f"with a {shown} chance of missing it (the fastest the sizing found)." in en
    zh = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert f"错过期限的概率为 {shown}（规模搜索中最快的一个" in zh
    words = english_words(_main_text(zh))
    assert words == [], sorted(set(words))
    assert len(english_words(_main_text(en))) > 100  # the counter reads the page (the English one is English)


@pytest.mark.django_db
def test_compare_shows_the_chance_each_plan_was_sized_for(client, make_estimate, deadline_scenario):
    confident, planned = make_estimate(data=CONFIDENT), make_estimate(data=deadline_scenario)
    html = client.get(f"/compare/?r={confident.share_token}&r={planned.share_token}").content.decode()
    row = re.search(r'data-key="confidence"><th>([^<]*)</th>(.*?)</tr>', html, re.S)
    assert row and row.group(1) == "Chance of meeting the deadline (sized for)"
    assert re.findall(r'<td class="num">([^<]*)</td>', row.group(2)) == ["90.0%", "—"]


@pytest.mark.django_db
def test_a_plan_sized_at_the_planned_mfu_says_nothing_of_a_chance(client, make_estimate, deadline_scenario):
    est = make_estimate(data=deadline_scenario)
    assert "deadline_confidence" not in est.result["compute"]
    en = client.get(f"/r/{est.share_token}/").content.decode()
    assert "must finish in 30 days" in _cards_why(en) and "Sized for a" not in en
    assert "Chance of meeting the deadline (sized for)" not in en


def test_the_counter_reads_the_main_text_as_the_browser_does():
    html = (
        '<header>Skip me</header><main lang="en"><p>每步 Step</p><code>HCCL_BUFFSIZE</code>'
        '<span lang="en">Cited Work</span><div hidden>Hidden words</div><br><p>MFU 41%</p>'
        "<details><summary>折叠 Folded</summary><pre>seq_len</pre></details>"
        "<details open><summary>展开</summary><p>Shown</p></details>"
        "<script>var x = 1;</script></main>"
    )
    assert english_words(_main_text(html)) == ["Step", "Folded", "Shown"]


# --- the API -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_refuses_a_chance_without_a_deadline_in_the_one_error_shape(api_client, scenario):
    body = {**scenario, "cluster": {"cards": 64, "deadline_confidence": 0.9}}
    (err,) = errors_of(api_client.post(URL, body, format="json"))
    assert (err["field"], err.get("code")) == ("cluster.deadline_confidence", "confidence-needs-deadline")
    assert err["message"] == "needs cluster.target_days: it is the chance of finishing by a deadline"


@pytest.mark.django_db
@pytest.mark.parametrize(("value", "code"), [(0.49, "must-be-at-least"), (1.0, "must-be-at-most")])
def test_the_api_refuses_a_chance_outside_its_range(api_client, deadline_scenario, value, code):
    body = {**deadline_scenario, "cluster": {"target_days": 30, "deadline_confidence": value}}
    (err,) = errors_of(api_client.post(URL, body, format="json"))
    assert (err["field"], err["code"]) == ("cluster.deadline_confidence", code)


@pytest.mark.django_db
def test_the_scenario_schema_documents_the_field(api_client):
    schema = api_client.get("/api/v1/scenario-schema").json()
    text = json.dumps(schema)
    assert '"deadline_confidence"' in text
    cluster = schema["$defs"]["Cluster"]["properties"]["deadline_confidence"]
    bounds = [b for b in cluster.get("anyOf", [cluster]) if "minimum" in b]
    assert bounds and (bounds[0]["minimum"], bounds[0]["maximum"]) == (0.5, 0.99)


def test_a_calibrated_plans_band_says_it_is_the_pilots_in_both_languages():
    from reports.summary import band_text

    band = {"source": "calibration", "relative_half_width": 0.1664}
    with translation.override("en"):
        text = band_text(band)
    assert text.startswith("The band is ±17% around the plan calibrated on your pilot run"), text
    with translation.override("zh-hans"):
        zh = band_text(band)
    zh_only(zh)
    assert "±17%" in zh, zh
