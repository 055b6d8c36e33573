"""No long function and no wide signature in the core (issue 19, item 2).

Walks every function of `estimator/` (methods and nested functions included) and fails on one over
MAX_LINES lines (from its `def` to its last line, decorators excluded, docstring included) or over
MAX_PARAMS parameters (positional, keyword-only, *args and **kwargs each count one). A parameter
group is passed as a frozen dataclass (storage.StorageInputs, cost.CapexBill, power.ItLoad, ...),
and a long function is split by concern.

ALLOWED names the functions that are still over a limit, each with why; it only shrinks. A function
in it that is within both limits fails too, so the list never keeps a name it no longer needs.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "estimator"
MAX_LINES = 80
MAX_PARAMS = 12

# "module path without .py, from estimator/" + "." + function name -> why it is still allowed
ALLOWED: dict[str, str] = {}


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    return (
        len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    )


def _sizes() -> dict[str, tuple[int, int]]:
    """Every function of the core: name -> (lines, parameters); the longest of a repeated name."""
    out: dict[str, tuple[int, int]] = {}
    for path in sorted(CORE.rglob("*.py")):
        module = path.relative_to(CORE).with_suffix("").as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                key = f"{module}.{node.name}"
                old = out.get(key, (0, 0))
                out[key] = (max(old[0], lines), max(old[1], _params(node)))
    return out


def _over(lines: int, params: int) -> bool:
    return lines > MAX_LINES or params > MAX_PARAMS


def test_no_core_function_over_the_limits():
    over = {k: v for k, v in _sizes().items() if _over(*v) and k not in ALLOWED}
    assert not over, "split these by concern or pass a parameter group as a frozen dataclass: " + ", ".join(
        f"{k} ({lines} lines, {params} parameters)" for k, (lines, params) in sorted(over.items())
    )


def test_the_allow_list_names_only_functions_still_over():
    sizes = _sizes()
    missing = sorted(k for k in ALLOWED if k not in sizes)
    assert not missing, f"allowed functions that no longer exist: {missing}"
    within = sorted(k for k in ALLOWED if not _over(*sizes[k]))
    assert not within, f"now within the limits, remove from ALLOWED: {within}"


def test_the_counts_are_the_ones_a_reader_counts():
    """The measure itself on a hand-written function: 3 lines, 4 parameters (a, b, *c, d=1)."""
    tree = ast.parse("def f(a, b, *c, d=1):\n    x = 1\n    return x\n")
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert (fn.end_lineno or 0) - fn.lineno + 1 == 3
    assert _params(fn) == 4
    assert _over(81, 0) and _over(1, 13) and not _over(80, 12)
