"""estimator.catalog._load._read keeps each data file's parse as JSON beside the bytecode: what it
returns is what tomllib parses, from the cache or not, and a cache of other bytes is never read."""

import sys
import tomllib

from estimator.catalog import _load


def test_cached_parse_is_the_toml_parse(tmp_path, monkeypatch):
    (tmp_path / "x.toml").write_text(
        'a = {value = 312e12, source = "s", as_of = "2020-05"}\nb = [1, 2.5, true]\n'
    )
    monkeypatch.setattr(_load, "DATA_DIR", tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    expected = tomllib.loads((tmp_path / "x.toml").read_text())
    assert _load._read("x.toml") == expected  # parsed, cache written
    assert len(list((tmp_path / "__pycache__").glob("x.toml.*.json"))) == 1
    assert _load._read("x.toml") == expected  # from the cache
    assert isinstance(_load._read("x.toml")["b"][0], int)


def test_a_changed_file_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setattr(_load, "DATA_DIR", tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "x.toml").write_text("a = 1\n")
    assert _load._read("x.toml") == {"a": 1}
    (tmp_path / "x.toml").write_text("a = 2\n")
    assert _load._read("x.toml") == {"a": 2}
    assert len(list((tmp_path / "__pycache__").glob("x.toml.*.json"))) == 1  # the old parse went


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path, monkeypatch):
    monkeypatch.setattr(_load, "DATA_DIR", tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    (tmp_path / "x.toml").write_text("a = 1\n")
    assert _load._read("x.toml") == {"a": 1}
    assert not (tmp_path / "__pycache__").exists()
