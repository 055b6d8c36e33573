"""Every bad input to the CLI exits 2 with ONE line on stderr, nothing on stdout and no traceback:
bad JSON, unknown names, negative numbers, missing files, impossible layouts, argparse's own usage
errors (python -m estimator --help)."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from estimator.__main__ import main

GOOD = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 8},
}


def _with(**sections) -> str:
    return json.dumps({**GOOD, **sections})


def _invoke(monkeypatch, capsys, args, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


CASES = {
    "bad-json": (["plan", "-"], "{bad", "invalid JSON"),
    "empty-input": (["plan", "-"], "", "invalid JSON"),
    "not-an-object": (["plan", "-"], "[1, 2]", "JSON object"),
    "unknown-preset": (["plan", "-"], _with(model={"preset": "gpt-9"}), "model.preset"),
    "unknown-accelerator": (["plan", "-"], _with(hardware={"accelerator": "tpu-v9"}), "hardware.accelerator"),
    "negative-numbers": (
        ["plan", "-"],
        _with(training={"tokens": -1e12}, cluster={"cards": -8}),
        "training.tokens: input should be greater than or equal to 1; cluster.cards",
    ),
    "negative-days": (["plan", "-"], _with(cluster={"target_days": -3}), "cluster.target_days"),
    "impossible-layout": (["plan", "-"], _with(parallelism={"tp": 3}), "parallelism.tp"),
    "two-sizings": (["plan", "-"], _with(cluster={"cards": 8, "target_days": 3}), "cluster"),
    "deadline-past-the-largest-cluster": (
        ["plan", "-"],
        _with(training={"tokens": 1e16}, cluster={"target_days": 1}),
        "cluster.target_days",
    ),
    "missing-file": (["plan", "/nonexistent/scenario.json"], "", "cannot read scenario file"),
    "missing-price-book": (["plan", "-", "--price-book", "/nonexistent/book.json"], _with(), "--price-book"),
    "missing-run": (["diagnose", "/nonexistent/run.json"], "", "cannot read run file"),
    "unknown-catalog-kind": (["catalog", "frob"], "", "kind"),
    "no-command": ([], "", "required: command"),
    "unknown-command": (["frob"], "", "invalid choice: 'frob'"),
    "bad-format": (["plan", "-", "--format", "xml"], "", "invalid choice: 'xml'"),
    "extra-argument": (["schema", "extra"], "", "unrecognized arguments: extra"),
    "unknown-option": (["validate", "--suite", "x"], "", "unrecognized arguments"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_exits_2_with_one_line(monkeypatch, capsys, case):
    args, stdin, needle = CASES[case]
    code, out, err = _invoke(monkeypatch, capsys, args, stdin)
    assert code == 2, err
    assert out == ""
    assert len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert err.startswith("error: ") and needle in err and "Traceback" not in err


def test_a_directory_is_not_a_scenario(monkeypatch, capsys, tmp_path: Path):
    code, out, err = _invoke(monkeypatch, capsys, ["plan", str(tmp_path)])
    assert (code, out, len(err.splitlines())) == (2, "", 1) and "cannot read" in err


def test_not_utf8_is_one_line(monkeypatch, capsys, tmp_path: Path):
    path = tmp_path / "s.json"
    path.write_bytes(b"\xff\xfe{")
    code, out, err = _invoke(monkeypatch, capsys, ["plan", str(path)])
    assert (code, out, len(err.splitlines())) == (2, "", 1) and "not UTF-8" in err


def test_the_real_process_prints_one_line_for_a_usage_error():
    """argparse writes to the real stderr and exits itself: checked in a process of its own."""
    out = subprocess.run(
        [sys.executable, "-m", "estimator", "plan"], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        "error: python -m estimator plan: the following arguments are required: scenario "
        "(python -m estimator --help)"
    ]
