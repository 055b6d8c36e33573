"""A sweep group the core refuses as a whole (a ScenarioError: here the contract's fixed TP that
does not divide a model's attention heads, resolve._check_parallelism) is worded on the sweep page
as the single plan's page words the same refusal: the same message, the same params, after the
field it is about. A sweep stored before the group errors shows its English sentence."""

from __future__ import annotations

import re

import pytest

from sweeps.digests import pack, unpack
from sweeps.models import SweepChunk
from sweeps.services import axes_of
from sweeps.summary import merge_digests
from tests.web.sweep_runs import run_sweep, zh_only
from tests.web.test_pages import FORM, _field_errors

# TP 3 divides the 24 attention (and KV) heads of Megatron-GPT 1.7B, not the 32 of Llama 3.1 8B:
# the Llama rows are refused as a group (fixed-tp-heads, {"heads": 32}, on parallelism.tp)
BASE = {
    "model": {"preset": "megatron-gpt-1.7b"},
    "training": {"tokens": 2e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 96},
    "parallelism": {"tp": 3},
    "cost": {"currency": "USD"},
}
AXES = {"model.preset": ["megatron-gpt-1.7b", "llama-3.1-8b"]}
EN = "parallelism.tp: must divide the 32 attention heads"  # the core's English sentence (str(exc))
# locale/zh_Hans/LC_MESSAGES/django.po: "Tensor parallel (TP)", "must divide the %(heads)s attention heads"
ZH_FIELD, ZH_MESSAGE = "张量并行（TP）", "必须整除 32 个注意力头"


@pytest.fixture
def refused(monkeypatch, client):
    return run_sweep(monkeypatch, client, {"name": "g", "base": BASE, "axes": AXES})


def _single_plan_words(client) -> tuple[str, str]:
    """The estimate form's words for the same scenario (Llama 3.1 8B, TP 3, 96 cards) in Chinese:
    the label of its TP field and the error beside it."""
    response = client.post("/zh-hans/", {**FORM, "cards": "96", "tp": "3"})
    assert response.status_code == 400
    block = _field_errors(response.content.decode(), "tp")
    label = re.search(r"<label[^>]*>(.*?)</label>", block, re.S)
    error = re.search(r'<ul class="errors"[^>]*><li>(.*?)</li></ul>', block, re.S)
    assert label and error, block
    return label.group(1).strip(), error.group(1).strip()


@pytest.mark.django_db
def test_a_refused_group_reads_as_the_single_plan_refusal(refused, client):
    sweep, en, zh = refused
    assert sweep.summary["error_codes"] == {EN: "fixed-tp-heads"}
    assert sweep.summary["error_details"] == {
        EN: [
            {
                "field": "parallelism.tp",
                "message": "must divide the 32 attention heads",
                "code": "fixed-tp-heads",
                "params": {"heads": 32},
            }
        ]
    }
    field, message = _single_plan_words(client)
    assert (field, message) == (ZH_FIELD, ZH_MESSAGE)
    words = f"{field}: {message}"  # the sweep page has no field to put it beside: the field first
    zh_only(words)
    assert f"<li>1 × {words}</li>" in zh and EN not in zh
    assert "<li>1 × Tensor parallel (TP): must divide the 32 attention heads</li>" in en


@pytest.mark.django_db
def test_the_api_rows_carry_the_groups_errors(refused, client):
    sweep, _, _ = refused
    body = client.get(f"/api/v1/sweeps/shared/{sweep.share_token}/results").json()
    planned, group = (dict(zip(body["columns"], row, strict=True)) for row in body["rows"])
    assert (group["error"], group["reason_code"]) == (EN, "fixed-tp-heads")
    assert '"params": {"heads": 32}' in group["reason_errors"] and planned["reason_errors"] is None


@pytest.mark.django_db
def test_a_sweep_stored_before_the_group_errors_shows_the_english_sentence(refused, client):
    """Its chunks as engine 2.76.0 stored them (the group's code, no errors: neither the rows'
    column nor the digests' details), its summary merged from those digests."""
    sweep, _, _ = refused
    chunks = list(SweepChunk.objects.filter(sweep=sweep).order_by("index"))
    for chunk in chunks:
        chunk.data = pack({k: v for k, v in unpack(chunk.data).items() if k != "reason_errors"})
        chunk.digest.pop("error_details", None)
        chunk.save(update_fields=["data", "digest"])
    sweep.summary = merge_digests(axes_of(sweep=sweep), [c.digest for c in chunks])
    sweep.save(update_fields=["summary"])
    assert sweep.summary["error_codes"] == {EN: "fixed-tp-heads"} and sweep.summary["error_details"] == {}
    zh = client.get(f"/zh-hans/sweeps/{sweep.share_token}/").content.decode()
    assert f"<li>1 × {EN}</li>" in zh and ZH_MESSAGE not in zh
    body = client.get(f"/api/v1/sweeps/shared/{sweep.share_token}/results").json()
    assert [row[body["columns"].index("reason_errors")] for row in body["rows"]] == [None, None]


def test_errors_that_are_no_list_of_errors_read_as_the_sentence():
    """A summary's details that are not a list of error objects (hand-edited, truncated): the
    English sentence, as a sweep stored before them; a code the catalogue does not know: its own
    English message after the field's words, as the estimate page shows it."""
    from django.utils import translation

    from reports import messages

    with translation.override("zh-hans"):
        for errors in ("x", [1], [], None, {"field": "parallelism.tp"}):
            assert messages.row_reason("fixed-tp-heads", EN, errors) == EN
        unknown = [{"field": "parallelism.tp", "message": "not a known sentence", "code": "no-such-code"}]
        assert messages.row_reason("no-such-code", "x", unknown) == f"{ZH_FIELD}: not a known sentence"
