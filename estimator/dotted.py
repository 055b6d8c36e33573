"""Dotted paths into nested dicts ("cost.capex.total"): the one get / set / pop every layer uses.

The scenario and result contracts are nested JSON objects; sweeps, forms, advice and summaries
name their fields by dotted path. A path step that is missing, or that meets a non-dict, reads as
absent; setting creates (or replaces a non-dict by) the intermediate objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def get_path(doc: Any, path: str, default: Any = None) -> Any:
    """The value at `path` in `doc`, or `default` when any step is missing or not a mapping."""
    node = doc
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set `path` in `doc` to `value`, creating intermediate dicts (a non-dict step is replaced)."""
    *parents, last = path.split(".")
    node = doc
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[last] = value


def pop_path(doc: dict[str, Any], path: str) -> Any:
    """Remove `path` from `doc` and return its value (None when absent); parents are left in place."""
    *parents, last = path.split(".")
    node: Any = doc
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return None
    return node.pop(last, None) if isinstance(node, dict) else None
