"""The CLI: plan (json and table), schema, catalog, validate; bad input exits 2 without a traceback."""

import io
import json
import subprocess
import sys
from dataclasses import dataclass

import pytest

from estimator.__main__ import main

# The seed article's section 6 example, corrected (docs/sources.md#source-article-errata): a 70B dense model,
# 5e11 tokens, a 320 TFLOP/s card at 50% MFU, 30 days.
ARTICLE = {
    "name": "seed article section 6",
    "model": {"params": 70e9},
    # the article counts 6·N·D only (the plan adds attention unless told not to)
    "training": {"tokens": 5e11, "attention_flops": False},
    "hardware": {
        "accelerator": {
            "name": "Ascend 910 (article's round figure)",
            "peak_flops_bf16": 320e12,
            "hbm_bytes": 64e9,
            "hbm_bandwidth_bytes_per_s": 1.6e12,
            "chip_family": "ascend-910b",
        },
        "cards_per_node": 8,
    },
    "cluster": {"target_days": 30},
    "efficiency": {"mfu": 0.5},
}


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run(monkeypatch, capsys):
    """The CLI in-process: main(argv) with `stdin` as standard input and its output captured."""

    def invoke(*args: str, stdin: str | None = None) -> Run:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        capsys.readouterr()  # drop anything printed before
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        out = capsys.readouterr()
        return Run(code, out.out, out.err)

    return invoke


def test_article_example_through_the_cli(run):
    out = run("plan", "-", stdin=json.dumps({**ARTICLE, "reliability": {"failures": False}}))
    assert out.returncode == 0, out.stderr
    compute = json.loads(out.stdout)["result"]["compute"]
    # 6 x 70e9 x 5e11 = 2.1e23 FLOP (errata: not 2.1e24)
    assert compute["training_flop"] == pytest.approx(2.1e23, rel=1e-9)
    # 2.1e23 / (1.6e14 FLOP/s) = 1.3125e9 card-seconds = 364,583 card-hours = 41.6 card-years
    assert compute["accelerator_hours"] == pytest.approx(364_583.3, rel=1e-4)
    assert compute["accelerator_hours"] / 8760 == pytest.approx(41.6, abs=0.05)
    # 1.3125e9 / 2,592,000 s = 506.4 cards -> 64 whole 8-card nodes = 512 (the article said 5,000)
    assert compute["cards"] == 512
    assert compute["nodes"] == 64
    assert compute["wall_clock_days"] == pytest.approx(1.3125e9 / 512 / 86400, rel=1e-6)
    assert compute["wall_clock_days"] <= 30


def test_article_example_with_failures_buys_the_cards_that_finish_in_30_days(run):
    out = run("plan", "-", stdin=json.dumps(ARTICLE))
    result = json.loads(out.stdout)["result"]
    cards, good = result["compute"]["cards"], result["goodput"]
    assert good["wall_clock_days"] <= 30
    assert cards > 512  # the failure-free 512 cards take 1.3125e9 / 512 / 86,400 = 29.67 days before failures
    fewer = run("plan", "-", stdin=json.dumps({**ARTICLE, "cluster": {"cards": cards - 8}}))
    assert json.loads(fewer.stdout)["result"]["goodput"]["wall_clock_days"] > 30


def test_table_format_is_for_people(run):
    out = run("plan", "-", "--format", "table", stdin=json.dumps(ARTICLE))
    assert out.returncode == 0, out.stderr
    assert "cards" in out.stdout and "with failures" in out.stdout


@pytest.mark.parametrize(
    ("stdin", "needle"),
    [
        ("{not json", "invalid JSON"),
        ('{"model": {"params": NaN}}', "invalid JSON"),
        (json.dumps({**ARTICLE, "training": {"tokens": -1}}), "training.tokens"),
        (json.dumps({**ARTICLE, "cluster": {"cards": 8, "target_days": 3}}), "cluster"),
        (json.dumps({**ARTICLE, "model": {"preset": "nope"}}), "model.preset"),
        ("[]", "JSON object"),
        ("1e999", "too large"),
    ],
)
def test_bad_input_exits_2_with_field_and_no_traceback(run, stdin, needle):
    out = run("plan", "-", stdin=stdin)
    assert out.returncode == 2
    assert needle in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


@pytest.mark.parametrize(
    ("stdin", "line"),
    [
        ('{"model": {"params": NaN}}', "error: model.params: invalid JSON: NaN is not a JSON number"),
        (
            '{"axes": {"mfu": [0.4, -Infinity]}}',
            "error: axes.mfu.1: invalid JSON: -Infinity is not a JSON number",
        ),
        ('{"tokens": 1e400}', "error: tokens: invalid JSON: 1e400 is too large for a number"),
    ],
)
def test_a_non_finite_number_is_refused_on_one_line_with_its_path(run, stdin, line):
    out = run("plan", "-", stdin=stdin)
    assert (out.returncode, out.stderr.strip(), out.stdout) == (2, line, "")


def test_missing_file_exits_2(run):
    out = run("plan", "/nonexistent/scenario.json")
    assert out.returncode == 2 and "cannot read" in out.stderr and "Traceback" not in out.stderr


def test_schema_is_json_schema(run):
    out = run("schema")
    assert out.returncode == 0
    schema = json.loads(out.stdout)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert "training" in schema["properties"]


def test_catalog_lists_contract_ids(run):
    out = run("catalog", "--format", "json")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for cid in ("ascend-910b2", "h100-sxm", "atlas-800t-a2", "llama-3.1-405b", "deepseek-v3"):
        assert cid in text


def test_unknown_catalog_kind_exits_2(run):
    out = run("catalog", "gpus")
    assert out.returncode == 2 and "kind" in out.stderr


def test_deep_json_exits_2_with_one_line_and_no_output(run):
    # a few hundred levels: "internal error", exit 1 before the depth cap
    out = run("plan", "-", stdin='{"model": ' + "[" * 400 + "]" * 400 + "}")
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "nested" in out.stderr


def test_lone_surrogate_exits_2_without_partial_json(run):
    # before: an extra model key was echoed, and printing it died half-way (exit 1, partial JSON)
    model = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}
    doc = {**ARTICLE, "model": {**model, "intermediate_size": 256, "note": "\ud800"}}
    out = run("plan", "-", stdin=json.dumps(doc))  # json.dumps writes the escape \ud800
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    assert out.stderr.startswith("error: model.note:")


def test_table_states_the_budget_and_the_deadline_risk(run):
    """50 M CNY against the article's plan: over by capex - 50 M, and what 50 M buys (issue 11)."""
    scenario = {**ARTICLE, "cost": {"currency": "CNY", "budget": 5e7}}
    out = run("plan", "-", "--format", "table", stdin=json.dumps(scenario))
    assert out.returncode == 0, out.stderr
    plan = json.loads(run("plan", "-", stdin=json.dumps(scenario)).stdout)["result"]
    over = plan["cost"]["capex"]["total"] - 5e7
    assert f"OVER by {over:,.0f} CNY" in out.stdout
    assert f"It buys {plan['budget']['affords']['cards']:,} cards" in out.stdout
    assert "chance of missing the 30-day deadline" in out.stdout
    # failures counted: the chance counts the MFU range with them, the P10-P90 is at the planned MFU
    assert "30-day deadline (MFU range and failures counted together)" in out.stdout
    assert "at the planned MFU;" in out.stdout


def test_module_entry_point():
    """`python -m estimator` runs main() (the one subprocess: the wiring, not the behaviour)."""
    out = subprocess.run(
        [sys.executable, "-m", "estimator", "schema"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0 and json.loads(out.stdout)["title"].startswith("ClusterPlan")
