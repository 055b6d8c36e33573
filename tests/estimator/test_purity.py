"""The core must import no web or task framework (docs/architecture.md#layers)."""

import subprocess
import sys

FORBIDDEN = ("django", "rest_framework", "celery", "plotly", "kombu", "redis")


def test_importing_the_whole_core_loads_no_framework():
    code = (
        "import sys, pkgutil, importlib, estimator\n"
        "for m in pkgutil.walk_packages(estimator.__path__, 'estimator.'):\n"
        "    if m.name != 'estimator.__main__': importlib.import_module(m.name)\n"
        f"bad = sorted({{n.split('.')[0] for n in sys.modules}} & set({FORBIDDEN!r}))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"estimator imported {out.stdout.strip()}"


def test_no_framework_import_statement_in_core_sources():
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2] / "estimator"
    pattern = re.compile(r"^\s*(import|from)\s+(" + "|".join(FORBIDDEN) + r")\b", re.M)
    offenders = [str(p) for p in root.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []
