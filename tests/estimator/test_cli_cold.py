"""The CLI's cold start (issue 27): importing the plan command's modules builds no pydantic
validator (each model is built when it first validates, `defer_build`), so a command pays only for
the models it uses. Checked in a new interpreter: this test process has built them already."""

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
