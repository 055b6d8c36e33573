"""A sweep's rows without a plan carry their reason's code (estimator.plan.batch_reasons): the API's
results give it beside the English sentence, the sweep page words it in the reader's language, and
a sweep stored before the codes (rows with the sentence alone, a summary without error_codes) still
reads so in both."""

from __future__ import annotations

import csv
import io

import pytest

from estimator.plan.batch_reasons import REASONS
from sweeps.digests import pack, unpack
from sweeps.models import SweepChunk
from tests.web.sweep_runs import run_sweep, zh_only

# Llama 3.1 405B on H100s at a given MFU: its weights, gradients and Adam states, 405e9 x 16 bytes =
# 6.5 TB, do not fit in the 8 x 80 GB = 640 GB of one server (no-feasible-layout, about those 8
# cards); 1,024 cards hold them (6.3 GB of states a card) and plan.
BASE = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 1e11},
    "hardware": {"accelerator": "h100-sxm"},
    "efficiency": {"mfu": 0.4},
}
NO_LAYOUT_EN = "no plan: no parallel layout passes the rules and fits in HBM on these cards"
# each code as the Chinese page words it (locale/zh_Hans/LC_MESSAGES/django.po)
ZH = {
    "deadline-needs-too-many-cards": "无方案：该期限所需的卡数超过了该网络能构建的最大集群",
    "no-feasible-layout": "无方案：这些卡上没有任何并行布局既满足规则又能放进 HBM",
    "run-never-finishes": "无方案：训练永远无法完成，每次中断的损失超过中断间隔",
    "budget-buys-no-cluster": "无方案：该预算买不起最小的集群",
    "layout-or-fabric-refuses-cards": "无方案：指定的布局不能整除卡数，或网络规模过大",
}


@pytest.fixture
def no_layout_sweep(monkeypatch, client):
    data = {"name": "r", "base": BASE, "axes": {"cluster.cards": [8, 1024]}}
    return run_sweep(monkeypatch, client, data)


def _results(client, sweep) -> list[dict]:
    body = client.get(f"/api/v1/sweeps/shared/{sweep.share_token}/results").json()
    return [dict(zip(body["columns"], row, strict=True)) for row in body["rows"]]


def _csv(client, sweep) -> list[dict]:
    response = client.get(f"/api/v1/sweeps/shared/{sweep.share_token}/results?format=csv")
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.mark.django_db
def test_the_api_gives_the_code_beside_the_sentence(no_layout_sweep, client):
    sweep, en, zh = no_layout_sweep
    low, high = _results(client, sweep)
    assert (low["ok"], low["error"], low["reason_code"], low["reason_cards"]) == (
        False,
        NO_LAYOUT_EN,
        "no-feasible-layout",
        8,
    )
    assert (high["ok"], high["error"], high["reason_code"], high["reason_cards"]) == (True, None, "", None)
    summary = client.get(f"/api/v1/sweeps/shared/{sweep.share_token}").json()["summary"]
    assert summary["errors"] == {NO_LAYOUT_EN: 1}
    assert summary["error_codes"] == {NO_LAYOUT_EN: "no-feasible-layout"}
    rows = _csv(client, sweep)
    assert [r["reason_code"] for r in rows] == ["no-feasible-layout", ""]
    assert NO_LAYOUT_EN in en and ZH["no-feasible-layout"] in zh and NO_LAYOUT_EN not in zh


@pytest.mark.django_db
def test_each_code_reads_in_chinese_on_a_sweep_page(no_layout_sweep, client):
    sweep, _, _ = no_layout_sweep
    sweep.summary["errors"] = {REASONS[code]: i + 1 for i, code in enumerate(ZH)}
    sweep.summary["error_codes"] = {REASONS[code]: code for code in ZH}
    sweep.save(update_fields=["summary"])
    zh = client.get(f"/zh-hans/sweeps/{sweep.share_token}/").content.decode()
    en = client.get(f"/sweeps/{sweep.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    for i, (code, words) in enumerate(ZH.items()):
        zh_only(words)
        assert f"<li>{i + 1} × {words}</li>" in zh, code
        assert REASONS[code] not in zh and f"<li>{i + 1} × {REASONS[code]}</li>" in en, code


@pytest.mark.django_db
def test_a_sweep_stored_before_the_codes_still_reads_in_both_languages(no_layout_sweep, client):
    sweep, _, _ = no_layout_sweep
    for chunk in SweepChunk.objects.filter(sweep=sweep):  # its rows as stored before: the sentence alone
        arrays = unpack(chunk.data)
        chunk.data = pack({k: v for k, v in arrays.items() if not k.startswith("reason_")})
        chunk.save(update_fields=["data"])
        assert "reason_code" not in {name.removeprefix("_codes.") for name in _members(chunk.data)}
    del sweep.summary["error_codes"]
    sweep.save(update_fields=["summary"])
    low, high = _results(client, sweep)
    assert (low["error"], low["reason_code"], low["reason_cards"]) == (
        NO_LAYOUT_EN,
        "no-feasible-layout",
        None,
    )
    assert (high["reason_code"], high["reason_cards"]) == ("", None)
    assert [r["reason_code"] for r in _csv(client, sweep)] == ["no-feasible-layout", ""]
    zh = client.get(f"/zh-hans/sweeps/{sweep.share_token}/").content.decode()
    en = client.get(f"/sweeps/{sweep.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"<li>1 × {ZH['no-feasible-layout']}</li>" in zh and NO_LAYOUT_EN not in zh
    assert f"<li>1 × {NO_LAYOUT_EN}</li>" in en


def _members(blob: bytes) -> list[str]:
    import zipfile

    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        return [n.removesuffix(".npy") for n in zf.namelist()]


@pytest.mark.django_db
def test_the_openapi_document_describes_the_reason_fields(client):
    # an addition inside v1 (docs/api-versioning.md): info.version's minor grows, the sentence stays
    doc = client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    assert doc["info"]["version"] == "1.2.0"
    schemas = doc["components"]["schemas"]
    columns = schemas["ResultPage"]["properties"]["columns"]["description"]
    assert all(f"`{name}`" in columns for name in ("error", "reason_code", "reason_cards", "reason_errors"))
    assert all(code in columns for code in ZH)
    summary = schemas["SweepStatus"]["properties"]["summary"]["description"]
    assert "`error_codes`" in summary and "`error_details`" in summary


def test_every_batch_reason_has_its_row_sentence_in_the_web_layer():
    # the web layer's msgid of each code is the core's English default (the API's `error` and the
    # English page read the same), and the Chinese page has each (ZH, checked on a page above)
    from reports.message_texts import ROW_REASONS

    assert set(ROW_REASONS) == set(REASONS) == set(ZH)
    assert all(ROW_REASONS[code] == REASONS[code] for code in REASONS)
