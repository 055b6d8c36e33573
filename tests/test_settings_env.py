"""The strict settings helpers (config/env.py), the README's configuration table and .env.example.

Pure: the helpers read the mapping they are given; one subprocess starts Django with a typo."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_list, env_rate, env_str

ROOT = Path(__file__).resolve().parents[1]
READERS = {"env_bool", "env_int", "env_float", "env_list", "env_rate", "env_str"}
SETTINGS_FILES = ("config/settings.py", "config/oidc.py", "config/gunicorn.py")


def _script():
    spec = importlib.util.spec_from_file_location("env_example", ROOT / "scripts" / "env_example.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


# ---- the helpers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        *[("1", True), ("TRUE", True), ("Yes", True), ("on", True), (" true ", True)],
        *[("0", False), ("False", False), ("NO", False), ("off", False)],
    ],
)
def test_env_bool_reads_the_documented_spellings(raw, expected):
    assert env_bool("X", not expected, env={"X": raw}) is expected


@pytest.mark.parametrize("raw", ["Flase", "2", "y", "enabled", "-1", "truee"])
def test_env_bool_refuses_anything_else_naming_the_variable(raw):
    with pytest.raises(ImproperlyConfigured, match=r"^SECURE_HTTPS=") as caught:
        env_bool("SECURE_HTTPS", True, env={"SECURE_HTTPS": raw})
    assert repr(raw) in str(caught.value)


def test_unset_or_blank_means_the_default():
    for env in ({}, {"X": ""}, {"X": "   "}):
        assert env_bool("X", True, env=env) is True
        assert env_int("X", 7, env=env) == 7
        assert env_float("X", 0.25, env=env) == 0.25
        assert env_list("X", "a,b", env=env) == ["a", "b"]
        assert env_rate("X", "5/hour", env=env) == "5/hour"
        assert env_str("X", "d", env=env) == "d"


def test_env_int_reads_whole_numbers_within_bounds():
    assert env_int("N", 0, env={"N": " 42 "}) == 42
    assert env_int("N", 0, minimum=-5, env={"N": "-5"}) == -5
    assert env_int("N", 99, minimum=1, maximum=10, env={}) == 99  # a default is the code's, not checked
    for raw in ("1.5", "abc", "1e3", "0x10", "10 000"):
        with pytest.raises(ImproperlyConfigured, match=r"^N='.*': expected a whole number"):
            env_int("N", 0, env={"N": raw})
    with pytest.raises(ImproperlyConfigured, match=r"^TRUSTED_PROXIES='-1': must be at least 0$"):
        env_int("TRUSTED_PROXIES", 0, minimum=0, env={"TRUSTED_PROXIES": "-1"})
    with pytest.raises(ImproperlyConfigured, match=r"^N='11': must be at most 10$"):
        env_int("N", 0, maximum=10, env={"N": "11"})


def test_env_float_reads_finite_numbers_within_bounds():
    assert env_float("F", 0.0, env={"F": "0.25"}) == 0.25
    assert env_float("F", 0.0, env={"F": "1e3"}) == 1000.0
    for raw in ("nan", "inf", "-Infinity"):
        with pytest.raises(ImproperlyConfigured, match=r"^F='.*': expected a finite number$"):
            env_float("F", 0.0, env={"F": raw})
    with pytest.raises(ImproperlyConfigured, match=r"^F='ten': expected a number$"):
        env_float("F", 0.0, env={"F": "ten"})
    with pytest.raises(ImproperlyConfigured, match=r"^F='0.05': must be at least 0.1$"):
        env_float("F", 1.0, minimum=0.1, env={"F": "0.05"})


def test_env_list_and_env_str():
    assert env_list("L", env={"L": " a.example, ,b.example,"}) == ["a.example", "b.example"]
    assert env_list("L", env={}) == []
    assert env_str("S", env={"S": " secret with spaces "}) == " secret with spaces "  # kept as given


def test_env_rate_accepts_what_drf_parses_and_nothing_else():
    for raw in ("120/minute", "5/s", "20/hour", "1000/day", "3/min", "10/minutes"):
        assert env_rate("R", "1/s", env={"R": raw}) == raw
    for raw in ("fast", "120", "120/fortnight", "/minute", "-1/minute"):
        with pytest.raises(ImproperlyConfigured, match=r"^THROTTLE_ANON="):
            env_rate("THROTTLE_ANON", "1/s", env={"THROTTLE_ANON": raw})


def test_a_typo_stops_the_start_naming_the_variable():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update(SECURE_HTTPS="Flase", DJANGO_SETTINGS_MODULE="config.settings")
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "ImproperlyConfigured: SECURE_HTTPS='Flase': expected one of 1/0, true/false" in done.stderr


# ---- no bare casts, and every variable documented --------------------------------------------


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]


def _is_environ_get(call: ast.Call) -> bool:
    """os.environ.get(...) or os.getenv(...)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    return func.attr == "getenv" or (func.attr == "get" and ast.unparse(func.value).endswith("environ"))


def variables_read() -> set[str]:
    """Every environment variable the settings files name: through a helper, os.environ or
    dj_database_url's `env=`, and in config/oidc.py the names it reads from its mapping
    (`given.get`, and the tuples of required ones)."""
    names: set[str] = set()
    for file in SETTINGS_FILES:
        tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                func = node.func
                helper = isinstance(func, ast.Name) and func.id in READERS
                mapping = isinstance(func, ast.Attribute) and ast.unparse(func) == "given.get"
                if helper or mapping or _is_environ_get(node):
                    names.add(str(node.args[0].value))
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "dj_database_url.config":
                names |= {
                    str(k.value.value)
                    for k in node.keywords
                    if k.arg == "env" and isinstance(k.value, ast.Constant)
                }
            elif isinstance(node, ast.Tuple) and file.endswith("oidc.py"):
                names |= {
                    e.value
                    for e in node.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    if e.value.startswith("OIDC_") and not e.value.endswith("_")
                }
    return names


def test_no_bare_int_or_float_of_an_environment_variable():
    bare = [
        f"{file}:{call.lineno}"
        for file in SETTINGS_FILES
        for call in _calls(ROOT / file)
        if isinstance(call.func, ast.Name) and call.func.id in ("int", "float", "bool")
        if any(isinstance(a, ast.Call) and _is_environ_get(a) for a in call.args)
    ]
    assert bare == []


def test_every_variable_the_settings_read_is_in_the_readme_table():
    script = _script()
    documented = {
        name for row in script.table_rows(script.README.read_text(encoding="utf-8")) for name in row.names
    }
    read = variables_read()
    assert {
        "SECURE_HTTPS",
        "WEB_WORKERS",
        "OIDC_TIMEOUT",
        "OIDC_OP_TOKEN_ENDPOINT",
        "GUNICORN_ACCESS_LOG",
    } <= read
    assert sorted(read - documented) == [], "add these to README.md#configuration"
    assert sorted(documented - read) == [], "the README documents variables nothing reads"


def test_env_example_is_the_readme_table():
    script = _script()
    expected = script.render(script.table_rows(script.README.read_text(encoding="utf-8")))
    assert (ROOT / ".env.example").read_text(encoding="utf-8") == expected, "run scripts/env_example.py"


def test_env_example_writes_literal_defaults_and_quotes_prose_ones():
    script = _script()
    readme = (
        "## Configuration\n\n| Variable | Default | What |\n| --- | --- | --- |\n"
        "| `A`, `B` | `10`, `x y` | two `things` |\n| `C` | unset: none | a \\| b |\n\nafter\n"
    )
    rows = script.table_rows(readme)
    assert [r.names for r in rows] == [("A", "B"), ("C",)]
    assert script.render(rows).split("\n", 3)[3] == (
        "\n# two things\n# A=10\n# B=x y\n\n# a | b\n# default: unset: none\n# C=\n"
    )
