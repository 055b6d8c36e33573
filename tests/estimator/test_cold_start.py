"""estimator.cold_start: the CLI's stand-in for pydantic's plugin loader and its cache of the code
dataclasses compiles (issue 27). Each is checked for giving what it replaces: the same plugins
(none), the same code objects, classes that behave as dataclasses do."""

import dataclasses
import marshal
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path

import pytest

from estimator import cold_start
from estimator.cold_start import DataclassCode

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, **env: str) -> str:
    base = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


PLUGIN_PROBE = """
import sys
from estimator.cold_start import skip_plugin_discovery
print(skip_plugin_discovery())
from pydantic import BaseModel
class M(BaseModel):
    x: int
print(M.model_validate({"x": 3}).x, "importlib.metadata" in sys.modules)
from pydantic.plugin._loader import get_plugins
print(list(get_plugins()))
"""


def test_the_stand_in_gives_no_plugin_without_importing_importlib_metadata():
    assert _run(PLUGIN_PROBE, PYDANTIC_DISABLE_PLUGINS="__all__").splitlines() == ["True", "3 False", "[]"]


def test_pydantic_s_own_loader_gives_no_plugin_when_they_are_disabled():
    # what the stand-in replaces, under the same setting: no plugin either
    real = "from pydantic.plugin._loader import get_plugins; print(list(get_plugins()))"
    for value in cold_start.PLUGINS_DISABLED:
        assert _run(real, PYDANTIC_DISABLE_PLUGINS=value) == "[]"


def test_no_stand_in_unless_every_plugin_is_disabled():
    out = _run(PLUGIN_PROBE, PYDANTIC_DISABLE_PLUGINS="some_plugin").splitlines()
    assert out[0] == "False" and out[1] == "3 True"  # the real loader, which imports importlib.metadata


def _define(cache: DataclassCode) -> type:
    cache.install()
    try:

        @dataclasses.dataclass(frozen=True)
        class Point:
            x: float
            y: float = 2.0
            tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    finally:
        cache.uninstall()
    return Point


def test_a_second_process_reuses_the_code_the_first_compiled(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "__pycache__" / "code.marshal"
    first = DataclassCode(path)
    _define(first)
    assert first.compiled == 6 and first.reused == 0  # init, repr, eq, hash, setattr, delattr
    assert path.is_file() and "exec" not in vars(dataclasses)
    second = DataclassCode(path)
    point = _define(second)
    assert second.compiled == 0 and second.reused == 6
    # the cached code is what compiling the text gives
    assert all(
        code == compile(text, "<string>", "exec", dont_inherit=True) for text, code in second.codes.items()
    )
    p = point(1.0)
    assert (p.x, p.y, p.tags) == (1.0, 2.0, ())
    assert p == point(1.0, 2.0) and p != point(1.5) and hash(p) == hash(point(1.0))
    assert repr(p) == "_define.<locals>.Point(x=1.0, y=2.0, tags=())"
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3.0  # type: ignore[misc]


def test_nothing_written_when_python_writes_no_bytecode(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "code.marshal"
    cache = DataclassCode(path)
    _define(cache)
    assert cache.compiled == 6 and not path.exists()


def test_an_unreadable_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "code.marshal"
    path.write_bytes(b"\x00 not marshal")
    cache = DataclassCode(path)
    point = _define(cache)
    assert cache.compiled == 6 and point(1.0).y == 2.0
    assert (
        isinstance(DataclassCode(path)._read(), dict) and len(DataclassCode(path)._read()) == 6
    )  # rewritten


def test_another_python_s_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "code.marshal"
    _define(DataclassCode(path))
    _, codes = marshal.loads(path.read_bytes())
    path.write_bytes(marshal.dumps((b"\x00\x00\r\n", codes)))  # another bytecode magic number
    cache = DataclassCode(path)
    _define(cache)
    assert cache.compiled == 6 and cache.reused == 0


def test_texts_no_process_runs_any_more_are_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "code.marshal"
    stale = {f"def f{i}(): pass": compile(f"def f{i}(): pass", "<string>", "exec") for i in range(13)}
    path.write_bytes(marshal.dumps((MAGIC_NUMBER, stale)))
    cache = DataclassCode(path)
    _define(cache)  # 6 texts run; 19 held is more than twice 6: only the 6 are kept
    assert len(cache.codes) == 19 and len(DataclassCode(path)._read()) == 6
    path.write_bytes(marshal.dumps((MAGIC_NUMBER, dict(list(stale.items())[:5]))))
    cache = DataclassCode(path)
    _define(cache)  # 11 held, no more than twice 6: all kept
    assert len(DataclassCode(path)._read()) == 11


def test_another_exec_in_dataclasses_is_left_alone(tmp_path, monkeypatch):
    theirs = DataclassCode(tmp_path / "theirs.marshal")
    monkeypatch.setattr(dataclasses, "exec", theirs.exec, raising=False)
    ours = DataclassCode(tmp_path / "ours.marshal")
    assert not ours.install()
    ours.uninstall()
    assert vars(dataclasses)["exec"] == theirs.exec


def test_exec_of_a_code_object_passes_through():
    ns: dict[str, object] = {}
    DataclassCode(Path("/nonexistent")).exec(compile("a = 1", "<string>", "exec"), {}, ns)
    assert ns == {"a": 1}


COVERAGE_PROBE = """
import estimator.errors, estimator.jsonio  # imported by estimator.__main__ before the cache is installed
from estimator.cold_start import DataclassCode
cache = DataclassCode()
cache.install()
import estimator.plan.compose, estimator.plan.work_budget
print(cache.compiled, cache.reused)
"""


def test_after_one_cli_plan_the_cache_serves_every_class_of_the_plan_path(tmp_path):
    """A plan process writes the cache; a new process importing the plan path compiles nothing."""
    path = tmp_path / "scenario.json"
    path.write_text(
        '{"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 2e11}, "cluster": {"cards": 64}}'
    )
    env = {"PATH": "/usr/bin:/bin"}  # bytecode (and the cache) written, as for an install
    subprocess.run(
        [sys.executable, "-m", "estimator", "plan", str(path)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    if not cold_start.CACHE_PATH.exists():
        pytest.skip("a read-only tree: the cache cannot be written")
    done = subprocess.run(
        [sys.executable, "-c", COVERAGE_PROBE], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    compiled, reused = map(int, done.stdout.split())
    assert compiled == 0 and reused > 300  # ~150 classes of ours and pydantic's, several methods each
