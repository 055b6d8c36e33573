"""The hardware, price and model catalog: typed entries loaded once from the TOML files here.

Every numeric figure in the data carries `source` and `as_of` (see `entries.Source`); lookups by an
unknown id raise `KeyError(id)`, which callers map to a field error. `CATALOG_VERSION` identifies the
data (a hash of the files) so a saved report can say which catalog it used.

Public API:
    accelerator(id) / accelerators()      server(id) / servers()      switch(id) / switches()
    transceiver(id) / transceivers()      drive(id) / drives()        preset(id) / presets()
    supernode(id) / supernodes()
    defaults() / default_sources()        catalog_listing()           CATALOG_VERSION
    read_toml(path): a TOML file parsed, its parse kept as JSON beside the bytecode (reference data)
    ACCELERATOR_IDS, SERVER_IDS, SWITCH_IDS, TRANSCEIVER_IDS, DRIVE_IDS, PRESET_IDS
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar

from estimator.catalog._load import Catalog, CatalogDataError, Preset, load_catalog, read_toml
from estimator.catalog.entries import Accelerator, Drive, Server, Source, Supernode, Switch, Transceiver

__all__ = [
    "ACCELERATOR_IDS",
    "CATALOG_VERSION",
    "DRIVE_IDS",
    "PRESET_IDS",
    "SERVER_IDS",
    "SUPERNODE_IDS",
    "SWITCH_IDS",
    "TRANSCEIVER_IDS",
    "Accelerator",
    "CatalogDataError",
    "Drive",
    "Preset",
    "Server",
    "Source",
    "Supernode",
    "Switch",
    "Transceiver",
    "accelerator",
    "accelerators",
    "catalog_listing",
    "default_sources",
    "defaults",
    "drive",
    "drives",
    "preset",
    "presets",
    "read_toml",
    "server",
    "servers",
    "supernode",
    "supernodes",
    "switch",
    "switches",
    "transceiver",
    "transceivers",
]

T = TypeVar("T")


@functools.cache
def _catalog() -> Catalog:
    return load_catalog()


def _lookup(table: Mapping[str, T], entry_id: str) -> T:
    try:
        return table[entry_id]
    except (KeyError, TypeError):
        raise KeyError(entry_id) from None


def accelerator(accelerator_id: str) -> Accelerator:
    """The catalog accelerator with this id (a dict lookup: cheap in hot loops). KeyError if unknown."""
    return _lookup(_catalog().accelerators, accelerator_id)


def accelerators() -> dict[str, Accelerator]:
    return dict(_catalog().accelerators)


def server(server_id: str) -> Server:
    return _lookup(_catalog().servers, server_id)


def servers() -> dict[str, Server]:
    return dict(_catalog().servers)


def switch(switch_id: str) -> Switch:
    return _lookup(_catalog().switches, switch_id)


def switches() -> dict[str, Switch]:
    return dict(_catalog().switches)


def transceiver(transceiver_id: str) -> Transceiver:
    return _lookup(_catalog().transceivers, transceiver_id)


def transceivers() -> dict[str, Transceiver]:
    return dict(_catalog().transceivers)


def drive(drive_id: str) -> Drive:
    return _lookup(_catalog().drives, drive_id)


def drives() -> dict[str, Drive]:
    return dict(_catalog().drives)


def supernode(supernode_id: str) -> Supernode:
    """The catalog supernode (scale-up unit: nodes, scale-up plane, racks). KeyError if unknown."""
    return _lookup(_catalog().supernodes, supernode_id)


def supernodes() -> dict[str, Supernode]:
    return dict(_catalog().supernodes)


def preset(preset_id: str) -> Preset:
    """A model preset: `.architecture` plus the published parameter counts. KeyError if unknown."""
    return _lookup(_catalog().presets, preset_id)


def presets() -> dict[str, Preset]:
    return dict(_catalog().presets)


def defaults() -> dict[str, float]:
    """Facility and price defaults by name (units in the names: usd, kwh, w, bytes_per_s ...)."""
    return dict(_catalog().defaults)


def default_sources() -> dict[str, Source]:
    return dict(_catalog().default_sources)


def source_dict(src: Source) -> dict[str, Any]:
    """A Source as plain JSON: source, as_of, and range/note when present."""
    out: dict[str, Any] = {"source": src.source, "as_of": src.as_of}
    if src.range is not None:
        out["range"] = list(src.range)
    if src.note:
        out["note"] = src.note
    return out


def _entry_dict(entry: Any) -> dict[str, Any]:
    data = {k: v for k, v in entry.__dict__.items() if k != "sources"}
    data["sources"] = {k: source_dict(s) for k, s in entry.sources.items()}
    return data


def _preset_dict(p: Preset) -> dict[str, Any]:
    from estimator.model.transformer import param_counts

    counts = param_counts(p.architecture)
    return {
        "id": p.id,
        "name": p.name,
        "architecture": dict(p.architecture.__dict__),
        "published_total_params": p.published_total_params,
        "published_active_params": p.published_active_params,
        "computed_total_params": counts.total,
        "computed_active_params": counts.active,
        "default_seq_len": p.default_seq_len,
        "sources": {k: source_dict(s) for k, s in p.sources.items()},
    }


def catalog_listing() -> dict[str, Any]:
    """Everything in the catalog as a JSON-serialisable dict, each figure with its sources.

    Shape: {"version", "accelerators": {id: {...fields, "sources": {field: {source, as_of, ...}}}},
    "servers", "switches", "transceivers", "drives", "supernodes" (same shape), "presets": {id: {id, name,
    architecture, published_*_params, computed_*_params, default_seq_len, sources}},
    "defaults": {name: {"value", "source", "as_of"[, "range", "note"]}}}.
    """
    cat = _catalog()
    tables = ("accelerators", "servers", "switches", "transceivers", "drives", "supernodes")
    listing: dict[str, Any] = {"version": cat.version}
    for table in tables:
        listing[table] = {eid: _entry_dict(e) for eid, e in getattr(cat, table).items()}
    listing["presets"] = {pid: _preset_dict(p) for pid, p in cat.presets.items()}
    listing["defaults"] = {
        k: {"value": v, **source_dict(cat.default_sources[k])} for k, v in cat.defaults.items()
    }
    return listing


CATALOG_VERSION: str = _catalog().version
ACCELERATOR_IDS: tuple[str, ...] = tuple(_catalog().accelerators)
SERVER_IDS: tuple[str, ...] = tuple(_catalog().servers)
SWITCH_IDS: tuple[str, ...] = tuple(_catalog().switches)
TRANSCEIVER_IDS: tuple[str, ...] = tuple(_catalog().transceivers)
DRIVE_IDS: tuple[str, ...] = tuple(_catalog().drives)
SUPERNODE_IDS: tuple[str, ...] = tuple(_catalog().supernodes)
PRESET_IDS: tuple[str, ...] = tuple(_catalog().presets)
