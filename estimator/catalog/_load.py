"""Read and check the catalog TOML files (stdlib `tomllib`); build the typed entries.

A figure is either a plain value or an inline table `{value, source, as_of[, range, note]}`; the
Source goes into the entry's `sources[field]`. Unknown or missing fields, a range that does not
contain its value, or a dangling reference (server -> accelerator) raise CatalogDataError at load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

from estimator.catalog.entries import (
    CHIP_FAMILIES,
    Accelerator,
    Drive,
    Server,
    Source,
    Supernode,
    Switch,
    Transceiver,
)
from estimator.model.config_json import architecture_from_config
from estimator.model.transformer import Architecture

DATA_DIR = Path(__file__).resolve().parent
DATA_FILES = (
    "accelerators.toml",
    "servers.toml",
    "switches.toml",
    "transceivers.toml",
    "drives.toml",
    "supernodes.toml",
    "models.toml",
    "defaults.toml",
    "failures.toml",  # read by estimator/catalog/failures.py
)
VERSION_PREFIX = "2026.11-"


class CatalogDataError(ValueError):
    """A catalog data file is malformed (a bug in the shipped data, not in user input)."""


@dataclass(frozen=True)
class Preset:
    """A named model: its architecture plus the published parameter counts it should reproduce."""

    id: str
    name: str
    architecture: Architecture
    published_total_params: float  # number of parameters
    published_active_params: float  # per token (MoE); equals total for dense models
    default_seq_len: int  # tokens, the pre-training sequence length
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Catalog:
    """Every catalog table by id, the defaults with their sources, and the data's version."""

    accelerators: dict[str, Accelerator]
    servers: dict[str, Server]
    switches: dict[str, Switch]
    transceivers: dict[str, Transceiver]
    drives: dict[str, Drive]
    supernodes: dict[str, Supernode]
    presets: dict[str, Preset]
    defaults: dict[str, float]
    default_sources: dict[str, Source]
    version: str


def catalog_version() -> str:
    """VERSION_PREFIX + first 8 hex digits of a sha256 over the data files' names and bytes."""
    digest = hashlib.sha256()
    for name in DATA_FILES:
        digest.update(name.encode())
        digest.update((DATA_DIR / name).read_bytes())
    return VERSION_PREFIX + digest.hexdigest()[:8]


T = TypeVar("T", bound="DataclassInstance")


def _read(name: str) -> dict[str, Any]:
    """The parsed catalog data file `name` (read_toml)."""
    return read_toml(DATA_DIR / name)


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed TOML file at `path`. tomllib is pure Python (a tenth of a cold CLI start for the
    catalog's nine files), so the parse is kept beside the bytecode as JSON keyed by the file's
    SHA-256 (the data are strings, numbers, booleans, lists and tables: JSON gives them back exactly)
    and written, like bytecode, unless Python was told not to (sys.dont_write_bytecode). tomllib is
    imported only when a file has no such parse yet (issue 27, cold start)."""
    raw = path.read_bytes()
    name = path.name
    cached = path.parent / "__pycache__" / f"{name}.{hashlib.sha256(raw).hexdigest()[:16]}.json"
    try:
        data: dict[str, Any] = json.loads(cached.read_bytes())
        return data
    except (OSError, ValueError):
        pass
    import tomllib

    data = tomllib.loads(raw.decode("utf-8"))
    if not sys.dont_write_bytecode:
        try:
            text = json.dumps(data, allow_nan=False)
            if json.loads(text) == data:  # only what JSON gives back unchanged
                cached.parent.mkdir(exist_ok=True)
                for stale in cached.parent.glob(f"{name}.*.json"):  # an edited file's old parse
                    stale.unlink(missing_ok=True)
                tmp = cached.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(cached)
        except (OSError, TypeError, ValueError):
            pass  # a read-only install or a value JSON cannot carry: parse each time
    return data


def split_figure(where: str, raw: Any) -> tuple[Any, Source | None]:
    """(value, Source) for an inline-table figure, (raw, None) for a plain value."""
    if not isinstance(raw, dict):
        return raw, None
    extra = set(raw) - {"value", "source", "as_of", "range", "note"}
    missing = {"value", "source", "as_of"} - set(raw)
    if extra or missing:
        raise CatalogDataError(
            f"{where}: figure needs value, source, as_of; bad keys {sorted(extra | missing)}"
        )
    value = raw["value"]
    rng = raw.get("range")
    if rng is not None:
        if len(rng) != 2 or not rng[0] <= rng[1]:
            raise CatalogDataError(f"{where}: range must be [low, high], got {rng!r}")
        if value and not rng[0] <= value <= rng[1]:
            raise CatalogDataError(f"{where}: value {value} lies outside its range {rng}")
        rng = (float(rng[0]), float(rng[1]))
    if not str(raw["source"]).strip() or not str(raw["as_of"]).strip():
        raise CatalogDataError(f"{where}: empty source or as_of")
    return value, Source(str(raw["source"]), str(raw["as_of"]), rng, str(raw.get("note", "")))


def _convert(where: str, annotation: str, value: Any) -> str | int | float | None:
    if annotation == "str":
        if not isinstance(value, str):
            raise CatalogDataError(f"{where}: expected a string, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CatalogDataError(f"{where}: expected a number, got {value!r}")
    if annotation == "int":
        if value != int(value):
            raise CatalogDataError(f"{where}: expected a whole number, got {value!r}")
        return int(value)
    if annotation == "float | None" and value == 0:
        return None  # 0 in the data means "none / not published"
    return float(value)


def build_entry(cls: type[T], entry_id: str, raw: Mapping[str, Any], table: str) -> T:
    """Build one Accelerator/Server/Switch/Transceiver/Drive from its TOML table."""
    specs = {f.name: f for f in dataclasses.fields(cls) if f.name not in ("id", "sources")}
    unknown = set(raw) - set(specs)
    if unknown:
        raise CatalogDataError(f"{table}.{entry_id}: unknown field(s) {sorted(unknown)}")
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for key, item in raw.items():
        where = f"{table}.{entry_id}.{key}"
        value, src = split_figure(where, item)
        annotation = str(specs[key].type)
        if annotation != "str" and src is None:
            raise CatalogDataError(f"{where}: a numeric figure needs source and as_of")
        values[key] = _convert(where, annotation, value)
        if src is not None:
            sources[key] = src
    required = [
        n
        for n, f in specs.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [n for n in required if n not in values]
    if missing:
        raise CatalogDataError(f"{table}.{entry_id}: missing field(s) {missing}")
    fields: dict[str, Any] = {"id": entry_id, "sources": sources, **values}
    return cls(**fields)


_PRESET_META = (
    "name",
    "source",
    "as_of",
    "published_total_params",
    "published_active_params",
    "default_seq_len",
)


def build_preset(preset_id: str, raw: Mapping[str, Any]) -> Preset:
    where = f"models.{preset_id}"
    missing = [k for k in _PRESET_META if k not in raw]
    if missing:
        raise CatalogDataError(f"{where}: missing field(s) {missing}")
    arch_fields = {f.name for f in dataclasses.fields(Architecture)}
    unknown = set(raw) - arch_fields - set(_PRESET_META)
    if unknown:
        raise CatalogDataError(f"{where}: unknown field(s) {sorted(unknown)}")
    try:
        arch = architecture_from_config({k: v for k, v in raw.items() if k in arch_fields})
    except ValueError as exc:
        raise CatalogDataError(f"{where}: {exc}") from None
    sources = {"architecture": Source(str(raw["source"]), str(raw["as_of"]))}
    figures: dict[str, Any] = {}
    for key in ("published_total_params", "published_active_params", "default_seq_len"):
        value, src = split_figure(f"{where}.{key}", raw[key])
        if src is None:
            raise CatalogDataError(f"{where}.{key}: needs source and as_of")
        figures[key], sources[key] = value, src
    return Preset(
        id=preset_id,
        name=str(raw["name"]),
        architecture=arch,
        published_total_params=float(figures["published_total_params"]),
        published_active_params=float(figures["published_active_params"]),
        default_seq_len=int(figures["default_seq_len"]),
        sources=sources,
    )


SCALEUP_MEDIA = ("optics", "copper", "board")
COOLING = ("liquid", "hybrid", "air")


def _check_supernodes(
    supernodes: Mapping[str, Any], servers: Mapping[str, Any], accelerators: Mapping[str, Any]
) -> None:
    """Cross-check supernodes.toml: references, media, and nodes x cards per node = cards."""
    for nid, sn in supernodes.items():
        where = f"supernodes.{nid}"
        if sn.server not in servers:
            raise CatalogDataError(f"{where}: unknown server {sn.server!r}")
        if sn.accelerator not in accelerators:
            raise CatalogDataError(f"{where}: unknown accelerator {sn.accelerator!r}")
        if sn.scaleup_medium not in SCALEUP_MEDIA or sn.cooling not in COOLING:
            raise CatalogDataError(
                f"{where}: scaleup_medium must be one of {SCALEUP_MEDIA}, cooling of {COOLING}"
            )
        if sn.nodes * servers[sn.server].cards_per_node != sn.cards:
            raise CatalogDataError(f"{where}: nodes x the server's cards per node must equal cards")
    for sid, srv in servers.items():
        if srv.supernode and srv.supernode not in supernodes:
            raise CatalogDataError(f"servers.{sid}: unknown supernode {srv.supernode!r}")
        if srv.supernode and supernodes[srv.supernode].server != sid:
            raise CatalogDataError(f"servers.{sid}: supernode {srv.supernode!r} is built of another server")


def load_catalog() -> Catalog:
    """Parse and cross-check every data file."""
    tables = {
        "accelerators": Accelerator,
        "servers": Server,
        "switches": Switch,
        "transceivers": Transceiver,
        "drives": Drive,
        "supernodes": Supernode,
    }
    built: dict[str, dict[str, Any]] = {
        table: {eid: build_entry(cls, eid, raw, table) for eid, raw in _read(f"{table}.toml").items()}
        for table, cls in tables.items()
    }
    presets = {pid: build_preset(pid, raw) for pid, raw in _read("models.toml").items()}
    defaults: dict[str, float] = {}
    default_sources: dict[str, Source] = {}
    for key, raw in _read("defaults.toml").items():
        value, src = split_figure(f"defaults.{key}", raw)
        if src is None:
            raise CatalogDataError(f"defaults.{key}: needs source and as_of")
        _convert(f"defaults.{key}", "float", value)  # rejects a non-number
        defaults[key], default_sources[key] = float(value), src
    for sid, srv in built["servers"].items():
        if srv.accelerator not in built["accelerators"]:
            raise CatalogDataError(f"servers.{sid}: unknown accelerator {srv.accelerator!r}")
    for aid, acc in built["accelerators"].items():
        if acc.default_server not in built["servers"]:
            raise CatalogDataError(f"accelerators.{aid}: unknown default_server {acc.default_server!r}")
        if acc.chip_family not in CHIP_FAMILIES or "chip_family" not in acc.sources:
            raise CatalogDataError(
                f"accelerators.{aid}: chip_family must be one of {', '.join(CHIP_FAMILIES)} with a source and as_of"
            )
    _check_supernodes(built["supernodes"], built["servers"], built["accelerators"])
    for did, drv in built["drives"].items():
        if drv.kind not in ("nvme", "hdd"):
            raise CatalogDataError(f"drives.{did}: kind must be 'nvme' or 'hdd'")
    return Catalog(
        presets=presets,
        defaults=defaults,
        default_sources=default_sources,
        version=catalog_version(),
        **built,
    )
