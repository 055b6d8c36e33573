"""Failure rates and recovery figures (failures.toml): interruptions per unit-hour by cause.

A fleet is a published count of interruptions by cause over an observed period on a known
cluster; the rate of a cause is its count divided by the exposure of the unit it scales with
(cards, nodes or switches of that cluster times the hours observed): Llama 3 405B's 148 faulty
GPUs + 19 SRAM + 17 system processor + 6 silent data corruption + 6 thermal = 196 accelerator
interruptions on 16,384 H100 over 1,296 h are 196 / (16,384 x 1,296) = 9.23e-6 per card-hour.
The rates are derived cause by cause from the published table, never fitted to its total.
Units: interruptions per unit-hour, seconds, bytes/s, hours.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from estimator.catalog._load import CatalogDataError, _read, split_figure
from estimator.catalog.entries import Source

UNITS = ("card", "node", "switch")
CAUSES = ("accelerator", "hbm", "host", "host_maintenance", "network", "software")
RECOVERY_FIELDS = (
    "detection_s",
    "rescheduling_s",
    "standby_swap_s",
    "host_copy_bytes_per_s",
    "peer_link_efficiency",
    "repair_h",
)


@dataclass(frozen=True)
class Fleet:
    """A published interruption census: counts by cause over `hours` on a cluster of known size."""

    id: str
    name: str
    source: str
    as_of: str
    hours: float
    exposure: dict[str, float]  # units of the fleet: card, node, switch
    counts: dict[str, float]  # unexpected interruptions by cause
    per: dict[str, str]  # cause -> unit it scales with
    planned: float  # planned interruptions over `hours` (a property of the job, not of its size)
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)

    def rate_per_unit_hour(self, cause: str) -> float:
        """Interruptions of `cause` per unit-hour = count / (units x hours)."""
        return self.counts[cause] / (self.exposure[self.per[cause]] * self.hours)

    @property
    def planned_per_hour(self) -> float:
        """Planned interruptions per job-hour = planned / hours."""
        return self.planned / self.hours


@dataclass(frozen=True)
class VendorRates:
    """The fleet whose rates a vendor's cards take and a multiplier on them (1.0 where measured)."""

    fleet: Fleet
    scale: float
    source: Source


@dataclass(frozen=True)
class Failures:
    """failures.toml: the fleets' interruption records, each vendor's rates, the recovery times (seconds)."""

    fleets: dict[str, Fleet]
    vendors: dict[str, VendorRates]
    recovery: dict[str, float]
    recovery_sources: dict[str, Source]

    def for_vendor(self, vendor: str) -> VendorRates:
        """The rates of `vendor` ("nvidia", "huawei", ...); the default entry for any other."""
        return self.vendors.get(vendor.lower(), self.vendors["default"])


def _figure(where: str, raw: object, sources: dict[str, Source], name: str) -> float:
    value, src = split_figure(where, raw)
    if src is None:
        raise CatalogDataError(f"{where}: a figure needs value, source and as_of")
    sources[name] = src
    return float(value)


def _fleet(fid: str, raw: dict[str, object]) -> Fleet:
    where = f"failures.toml fleets.{fid}"
    sources: dict[str, Source] = {}
    causes, per = raw["causes"], raw["per"]
    assert isinstance(causes, dict) and isinstance(per, dict)
    if set(causes) != set(CAUSES) or set(per) != set(CAUSES) or not set(per.values()) <= set(UNITS):
        raise CatalogDataError(f"{where}: causes and per must name exactly {CAUSES} with units {UNITS}")
    return Fleet(
        id=fid,
        name=str(raw["name"]),
        source=str(raw["source"]),
        as_of=str(raw["as_of"]),
        hours=_figure(f"{where}.hours", raw["hours"], sources, "hours"),
        exposure={
            "card": _figure(f"{where}.cards", raw["cards"], sources, "cards"),
            "node": _figure(f"{where}.nodes", raw["nodes"], sources, "nodes"),
            "switch": _figure(f"{where}.switches", raw["switches"], sources, "switches"),
        },
        counts={c: _figure(f"{where}.causes.{c}", causes[c], sources, c) for c in CAUSES},
        per={c: str(per[c]) for c in CAUSES},
        planned=_figure(f"{where}.planned", raw["planned"], sources, "planned"),
        sources=sources,
    )


@functools.cache
def failures() -> Failures:
    """failures.toml parsed and checked (CatalogDataError on malformed data)."""
    data = _read("failures.toml")
    fleets = {fid: _fleet(fid, raw) for fid, raw in data["fleets"].items()}
    vendors = {}
    for vid, raw in data["vendors"].items():
        if raw["fleet"] not in fleets:
            raise CatalogDataError(f"failures.toml vendors.{vid}: unknown fleet {raw['fleet']!r}")
        srcs: dict[str, Source] = {}
        scale = _figure(f"failures.toml vendors.{vid}.scale", raw["scale"], srcs, "scale")
        vendors[vid] = VendorRates(fleets[raw["fleet"]], scale, srcs["scale"])
    if "default" not in vendors:
        raise CatalogDataError("failures.toml: vendors.default is required")
    rec_sources: dict[str, Source] = {}
    rec = data["recovery"]
    if set(rec) != set(RECOVERY_FIELDS):
        raise CatalogDataError(f"failures.toml recovery: needs exactly {RECOVERY_FIELDS}")
    recovery = {k: _figure(f"failures.toml recovery.{k}", rec[k], rec_sources, k) for k in RECOVERY_FIELDS}
    return Failures(fleets, vendors, recovery, rec_sources)
