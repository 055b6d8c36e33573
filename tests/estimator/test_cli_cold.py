"""The CLI's cold start (issue 27): importing the plan command's modules builds no pydantic
validator (each model is built when it first validates, `defer_build`), so a command pays only for
the models it uses. Checked in a new interpreter: this test process has built them already."""

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import estimator.plan.compose, estimator.contract.price_book, estimator.contract.sweep
from pydantic import BaseModel

def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)

ours = [m for m in subclasses(BaseModel) if m.__module__.startswith("estimator.")]
print(len(ours))
print(",".join(sorted(m.__name__ for m in ours if m.__pydantic_complete__)))
"""


def test_importing_the_contract_builds_no_validator():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert int(out[0]) >= 10  # Scenario, its sections, the price book: the probe sees them
    assert out[1:] == [""], f"built on import: {out[1]}"


# What `python -m estimator plan` must not import (issue 27, cold start): the other commands' and
# paths' modules (validation, diagnose, sweeps, a pilot's calibration), the web stack, the
# distributions' metadata, and tomllib
# once the catalog's and the evidence bands' parses are kept beside the bytecode
# (estimator.catalog.read_toml).
NOT_ON_THE_PLAN_PATH = (
    "estimator.validation",
    "estimator.plan.diagnose",
    "estimator.plan.batch",
    "estimator.contract.sweep",
    "estimator.plan.pilot",
    "estimator.plan.calibration",
    "estimator.plan.pilot_section",
    "estimator.report_text",  # the --format table text only
    "estimator.contract.price_book",  # a book's pydantic models: only a plan that names a book
    "importlib.metadata",  # pydantic's plugin loader imports it (estimator.cold_start stands in)
    "numpy.polynomial",  # the erfc fit's polynomial is summed by Horner's rule (cluster.reliability)
    "numpy.ma",  # np.unique and np.percentile import it (estimator.arrays stands in for them)
    "django",
    "celery",
    "plotly",
    "scipy",
    "pandas",
)

CLI_PROBE = """
import gc, json, os, runpy, sys
sys.argv = ["python -m estimator", "plan", sys.argv[1]]
try:
    runpy.run_module("estimator", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
sys.stderr.write("PROBE " + json.dumps({"code": code, "modules": sorted(sys.modules), "threads": threads,
    "gc_enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
    "dataclasses_exec": "exec" in vars(sys.modules["dataclasses"])}))
"""


def _plan_cli_probe(tmp_path: Path, scenario: dict) -> dict:
    """The modules and OS threads of a new `python -m estimator plan` process after it planned;
    run twice so the first writes the bytecode and the data files' parses (as an install has them)."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS")
    }
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", CLI_PROBE, str(path)], cwd=ROOT, env=env, capture_output=True, text=True
        )
    probe: dict = json.loads(done.stderr.rsplit("PROBE ", 1)[1])
    assert probe["code"] == 0, done.stderr
    assert json.loads(done.stdout)["result"]["compute"]["cards"] > 0  # it planned
    return probe


def _imported(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_the_plan_command_imports_only_what_planning_needs(tmp_path):
    scenario = {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cluster": {"target_days": 60},
    }
    probe = _plan_cli_probe(tmp_path, scenario)
    modules = probe["modules"]
    assert "estimator.plan.compose" in modules  # the probe ran the plan command
    heavy = [name for name in NOT_ON_THE_PLAN_PATH if _imported(modules, name)]
    assert heavy == []
    parses = [
        p
        for d in ("catalog", "reference_data")
        for p in (ROOT / "estimator" / d / "__pycache__").glob("*.toml.*.json")
    ]
    if len(parses) >= 10:  # the nine catalog files and the evidence bands (else a read-only tree)
        assert "tomllib" not in modules
    # the collector was paused for the imports and runs again, their objects frozen (estimator.__main__)
    assert probe["gc_enabled"] and probe["frozen"] > 0
    assert not probe["dataclasses_exec"]  # estimator.cold_start's cache is uninstalled at the end
    if probe["threads"] is not None:  # Linux: OpenBLAS started no idle threads beside the one that plans
        assert probe["threads"] == 1


def test_the_cli_called_in_process_leaves_the_collector_alone(capsys):
    from estimator.__main__ import main

    frozen = gc.get_freeze_count()
    assert main(["schema"]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    assert json.loads(capsys.readouterr().out)["title"] == "ClusterPlan scenario v1"
