"""A sweep's axis values as the reader reads them (reports.axis_values): tokens in B/T or 亿/万亿, a
chance in percent as the builder asks it, money in the sweep's currency, on the page's header, best
tables and heatmaps, in English and Chinese."""

from __future__ import annotations

import json
import re

import pytest
from django.utils import translation

from reports.axis_values import axis_value, axis_values
from tests.web.sweep_runs import run_sweep
from tests.web.test_deadline_confidence import CONFIDENT


@pytest.mark.parametrize(
    ("field", "value", "en", "zh"),
    [
        ("training.tokens", 1.5e12, "1.5T", "1.5万亿"),  # 1万亿 = 1e12
        ("training.tokens", 2e11, "200B", "2000亿"),  # 1亿 = 1e8
        ("cluster.deadline_confidence", 0.5, "50%", "50%"),
        ("cluster.deadline_confidence", 0.975, "97.5%", "97.5%"),
        ("cluster.cards", 4096, "4,096", "4,096"),
        ("cluster.budget", 1e8, "CN¥100M", "¥1亿"),
        ("hardware.accelerator", "h100-sxm", "h100-sxm", "h100-sxm"),
    ],
)
def test_an_axis_value_reads_in_the_readers_numbers(field, value, en, zh):
    for lang, expected in (("en", en), ("zh-hans", zh)):
        with translation.override(lang):
            assert axis_value(field, value, "CNY") == expected, lang


def test_values_that_would_read_alike_stay_as_written():
    # 1.5e12 and 1.504e12 both read 1.5T at three figures: one heatmap category for two values
    with translation.override("en"):
        assert axis_values("training.tokens", [1.5e12, 1.504e12]) == ["1500000000000.0", "1504000000000.0"]
        assert axis_values("training.tokens", [2e11, 1.5e12]) == ["200B", "1.5T"]


@pytest.mark.django_db
def test_the_sweep_page_writes_tokens_and_chances_as_the_reader_reads_them(monkeypatch, client):
    axes = {"training.tokens": [2e11, 1.5e12], "cluster.deadline_confidence": [0.5, 0.975]}
    _, en, zh = run_sweep(monkeypatch, client, {"name": "q", "base": CONFIDENT, "axes": axes})
    assert "(200B … 1.5T)" in en and "(50% … 97.5%)" in en
    assert "(2000亿 … 1.5万亿)" in zh
    for html in (en, zh):
        assert "1500000000000" not in re.sub(r"<script.*?</script>", "", html, flags=re.S)
        assert "<td>0.975</td>" not in html and "<td>97.5%</td>" in html
    heat = json.loads(re.search(r'<script id="heat-0-data"[^>]*>(.*?)</script>', zh, re.S).group(1))
    assert heat["data"][0]["x"] == ["50%", "97.5%"] or heat["data"][0]["y"] == ["50%", "97.5%"]
    assert "1.5万亿" in heat["data"][0]["x"] + heat["data"][0]["y"]


@pytest.mark.django_db
def test_a_cards_axis_gives_the_cards_once_in_the_best_tables(monkeypatch, client):
    base = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 64},
        "efficiency": {"mfu": 0.4},
    }
    axes = {"cluster.cards": [512, 1024]}
    _, en, _ = run_sweep(monkeypatch, client, {"name": "q", "base": base, "axes": axes})
    (head, *_) = re.findall(r'<table class="best grid-table"[^>]*>\s*<thead>(.*?)</thead>', en, re.S)
    headers = re.findall(r"<th>(.*?)</th>", head)
    # the axis column "Cards" is the plan's card count (each row planned on its axis value): one column
    assert [h.lower() for h in headers].count("cards") == 1, headers
    # a deadline-sized sweep keeps the plan's cards: there they answer the question
    days = {**base, "cluster": {"target_days": 30}}
    _, en, _ = run_sweep(
        monkeypatch, client, {"name": "q", "base": days, "axes": {"training.tokens": [1e11, 2e11]}}
    )
    (head, *_) = re.findall(r'<table class="best grid-table"[^>]*>\s*<thead>(.*?)</thead>', en, re.S)
    assert "cards" in re.findall(r"<th>(.*?)</th>", head)
