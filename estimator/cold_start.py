"""What a one-command process (`python -m estimator ...`) skips at start-up (issue 27, cold start).

Two costs of a cold `plan` that are neither the estimator's work nor its modules' code:

- `dataclasses` writes each class's methods (__init__, __repr__, __eq__, and for a frozen class
  __hash__, __setattr__, __delattr__) as source text and compiles it when the class is defined:
  CPython 3.11 compiles each method separately, about 800 compilations (a sixth of a cold plan) for
  the plan command's ~150 classes. `DataclassCode` keeps the compiled code beside the bytecode,
  keyed by that source text, so a later process executes the same code without compiling it.
- pydantic looks for plugins when it builds its first validator; with PYDANTIC_DISABLE_PLUGINS it
  finds none, but its plugin loader module imports importlib.metadata (email, zipfile, socket...)
  first, a tenth of a cold plan. `skip_plugin_discovery` stands in for that module.

Neither changes a result: the code run is the code that compiling the same text gives (compile
is deterministic), and the stand-in returns what the loader returns when plugins are disabled.
Both are for the CLI's `__main__` only; a library caller (the web layer, the tests) is untouched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import os
import sys
import types
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from typing import Any, Final

# Python's own cache directory for this package, and the interpreter's tag: marshal's format and
# the text dataclasses generates both depend on the Python version, as bytecode does (the file
# also starts with the bytecode's magic number, checked on reading, as a .pyc's is).
CACHE_PATH: Final = (
    Path(__file__).resolve().parent / "__pycache__" / f"dataclass-code.{sys.implementation.cache_tag}.marshal"
)
# A cache holding more than this many times the texts the writing process ran keeps only those:
# the texts of edited or removed classes do not pile up.
STALE_FACTOR: Final = 2

# pydantic.plugin._loader.get_plugins returns no plugin for these values of the variable.
PLUGINS_DISABLED: Final = ("__all__", "1", "true")
PLUGIN_LOADER: Final = "pydantic.plugin._loader"


def _no_plugins() -> tuple[()]:
    return ()


def skip_plugin_discovery() -> bool:
    """If PYDANTIC_DISABLE_PLUGINS disables every plugin and pydantic's plugin loader is not yet
    imported, register a stand-in whose get_plugins() returns no plugin, as the loader itself does
    then, without importing importlib.metadata. True if the stand-in is in place."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in PLUGINS_DISABLED:
        return False
    if PLUGIN_LOADER in sys.modules:
        return False
    stand_in = types.ModuleType(
        PLUGIN_LOADER, "No pydantic plugin (PYDANTIC_DISABLE_PLUGINS): estimator.cold_start"
    )
    stand_in.get_plugins = _no_plugins  # type: ignore[attr-defined]
    sys.modules[PLUGIN_LOADER] = stand_in
    return True


class DataclassCode:
    """The code objects dataclasses compiles, by source text, read from and written to `path`.

    `install()` puts `self.exec` in the dataclasses module's namespace, where it shadows the builtin
    `exec` that module calls with the generated text; `uninstall()` removes it and, if a text was
    compiled here and Python may write bytecode (sys.dont_write_bytecode, as for .pyc files), writes
    the cache (a temporary file, then a rename: a concurrent process reads the old or the new one).
    The file is trusted as the .pyc files beside it are: both are code Python runs."""

    def __init__(self, path: Path = CACHE_PATH) -> None:
        self.path = path
        self.codes: dict[str, types.CodeType] = {}
        self.used: set[str] = set()  # texts executed in this process
        self.compiled = 0  # texts compiled in this process (not found in the cache)
        self.reused = 0  # texts found in the cache

    def install(self) -> bool:
        """Read the cache and shadow dataclasses' exec; False (nothing done) if something else
        already shadows it."""
        if "exec" in vars(dataclasses):
            return False
        self.codes = self._read()
        dataclasses.exec = self.exec  # type: ignore[attr-defined]
        return True

    def uninstall(self) -> None:
        if vars(dataclasses).get("exec") == self.exec:
            del dataclasses.exec  # type: ignore[attr-defined]
        if self.compiled and not sys.dont_write_bytecode:
            self._write()

    def exec(self, source: Any, /, *args: Any, **kwargs: Any) -> None:
        """exec(source, globals, locals) with the code compiled from `source` once per cache.
        Compiled as exec(str) compiles: file name "<string>", no __future__ flag of this module."""
        if not isinstance(source, str):
            exec(source, *args, **kwargs)
            return
        self.used.add(source)
        code = self.codes.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self.codes[source] = code
            self.compiled += 1
        else:
            self.reused += 1
        exec(code, *args, **kwargs)

    def _read(self) -> dict[str, types.CodeType]:
        try:
            magic, data = marshal.loads(self.path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if magic != MAGIC_NUMBER or not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, types.CodeType)}

    def _write(self) -> None:
        codes = self.codes
        if len(codes) > STALE_FACTOR * len(self.used):
            codes = {text: code for text, code in codes.items() if text in self.used}
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(exist_ok=True)
            tmp.write_bytes(marshal.dumps((MAGIC_NUMBER, codes)))
            tmp.replace(self.path)
        except OSError:  # a read-only install: compile each time
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
