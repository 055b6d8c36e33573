"""Capital cost, owned cost per card-hour, the run's cost owned against cloud, and break-even.

Sources: docs/architecture.md#formulas ("Power and cost"); price anchors in
docs/sources.md#prices and the catalog (all dated, most grade [B]/[C]: defaults a user
overrides, never facts). Every price is an argument; the plan fills them from the catalog.

Units: money in USD inside the core (catalog prices are USD); `currency` converts at the edge, so
`to_dict()` is in the requested currency. Power in W, energy in Wh/kWh, time in hours, months of
730 h (8,760 h / 12).

Formulas (all broadcast over numpy arrays for sweeps; no per-scenario Python loop):

    capex.compute  = nodes x server price (cards included) + cards x card price (0 when included)
    capex.network  = switches x switch price + transceivers x optic price + cables x cable price
                     + NIC ports x NIC price (0 when the NICs are in the server price)
    capex.storage  = drives x drive price + storage nodes x storage-node price
    capex.scaleup  = the scale-up plane outside the nodes (supernodes' switches, optics, cables;
                     scaleup.py), its own category so capex.network stays the scale-out fabric
    depreciation   = straight line to zero over `depreciation_years` (default 4; no residual value.
                     Anchors: hyperscalers depreciate servers over 5-6 years, AI-cloud TCO models use
                     3-5; published TCO notes quote 25-35 % residual after 36 months, which 4-year straight
                     line approximates)
    fixed per hour = capex / (years x 8,760 h) + colo (per kW of IT power per month) / 730
                     + maintenance (fraction of capex per year) / 8,760
    energy per h   = facility W / 1000 x electricity price per kWh   (facility W = IT W x PUE)
    owned per card-hour = fixed per hour / (cards x utilization) + energy per hour / cards

Colo is added to the electricity bill (space, cooling and operations billed per contracted IT kW);
when a colo rate is all-in (power included), pass `electricity_usd_per_kwh=0` so power is not paid twice.

Utilization spreads the fixed costs over the hours the cards actually work; energy is only charged
for busy hours (idle draw ignored: documented simplification). The run's owned cost is
`card-hours x owned per card-hour`: with utilization 1 (the default) that is the amortised share of
capex over the run's own duration plus its energy and facility opex; a lower fleet utilization
charges the run for the idle time around it. Cloud cost = card-hours x price (on demand, reserved).

    break-even months = capex / (monthly cloud bill - monthly owned opex) at the fleet utilization u
    the owned cost assumes: cloud bill = u x cards x 730 h x on-demand price (the busy hours, the
    ones renting would pay for), owned opex = u x energy at full load + colo + maintenance per month
    (energy is drawn in busy hours, colo and maintenance are paid for every month); never (None in
    JSON, inf in arrays) when the cloud bill does not exceed the owned opex. At u = 1 that is
    continuous use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from estimator.cluster.power import plain
from estimator.errors import ScenarioError

HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0  # 730 h
DEFAULT_DEPRECIATION_YEARS = 4.0  # see module docstring
DEFAULT_ELECTRICITY_USD_PER_KWH = 0.08  # docs/sources.md#prices: EIA US industrial avg $0.0733 (2017) [B]
DEFAULT_USD_TO_CNY = 7.2  # approx. 2024 annual average (~7.19 CNY/USD); override with the day's rate
CURRENCIES = ("USD", "CNY")


def exchange_rate(currency: str = "USD", usd_to_cny: float | None = None) -> float:
    """Units of `currency` per USD: 1 for USD, `usd_to_cny` (default 7.2) for CNY."""
    if currency not in CURRENCIES:
        raise ScenarioError(f"Currency must be one of {', '.join(CURRENCIES)}.", "cost.currency")
    if currency == "USD":
        return 1.0
    rate = DEFAULT_USD_TO_CNY if usd_to_cny is None else float(usd_to_cny)
    if not rate > 0:
        raise ScenarioError("The exchange rate must be positive.", "cost.usd_to_cny")
    return rate


@dataclass(frozen=True)
class CapexBill:
    """What is bought: whole-item counts and their unit prices (USD per item); all broadcastable.

    `server_price_usd` is per compute node with its cards (catalog `Server.price_usd`); to price cards
    separately pass the bare server price and `card_price_usd`. `scaleup_usd` is the whole scale-up
    plane outside the nodes (scaleup.py), in USD."""

    nodes: ArrayLike
    server_price_usd: ArrayLike
    cards: ArrayLike = 0
    card_price_usd: ArrayLike = 0.0
    switches: ArrayLike = 0
    switch_price_usd: ArrayLike = 0.0
    transceivers: ArrayLike = 0
    transceiver_price_usd: ArrayLike = 0.0
    cables: ArrayLike = 0
    cable_price_usd: ArrayLike = 0.0
    nic_ports: ArrayLike = 0
    nic_port_price_usd: ArrayLike = 0.0
    drives: ArrayLike = 0
    drive_price_usd: ArrayLike = 0.0
    storage_nodes: ArrayLike = 0
    storage_node_price_usd: ArrayLike = 0.0
    scaleup_usd: ArrayLike = 0.0


@dataclass(frozen=True)
class RunningPrices:
    """What running and renting cost: electricity (USD/kWh), cloud prices (USD per card-hour, None =
    not given), straight-line depreciation (years), fleet utilization (0-1], colo (USD per IT
    kW-month), maintenance (fraction of capex per year) and the reporting currency (module
    docstring); all broadcastable."""

    electricity_usd_per_kwh: ArrayLike = DEFAULT_ELECTRICITY_USD_PER_KWH
    cloud_usd_per_card_hour: ArrayLike | None = None
    cloud_reserved_usd_per_card_hour: ArrayLike | None = None
    depreciation_years: ArrayLike = DEFAULT_DEPRECIATION_YEARS
    utilization: ArrayLike = 1.0
    colo_usd_per_kw_month: ArrayLike = 0.0
    maintenance_fraction_per_year: ArrayLike = 0.0
    currency: str = "USD"
    usd_to_cny: float | None = None


DEFAULT_RUNNING = RunningPrices()


def capex_usd(bill: CapexBill) -> dict[str, np.ndarray]:
    """Capital cost in USD by category {compute, network, storage, scaleup, total}; broadcasts.

    compute = nodes x server price + cards x card price; network = switches, optics, cables and NIC
    ports x their prices; storage = drives and storage nodes x theirs (module docstring)."""

    def m(n: ArrayLike, p: ArrayLike) -> np.ndarray:
        return np.asarray(n, dtype=np.float64) * np.asarray(p, dtype=np.float64)

    b = bill
    compute = m(b.nodes, b.server_price_usd) + m(b.cards, b.card_price_usd)
    network = (
        m(b.switches, b.switch_price_usd)
        + m(b.transceivers, b.transceiver_price_usd)
        + m(b.cables, b.cable_price_usd)
        + m(b.nic_ports, b.nic_port_price_usd)
    )
    storage = m(b.drives, b.drive_price_usd) + m(b.storage_nodes, b.storage_node_price_usd)
    scaleup = np.asarray(b.scaleup_usd, dtype=float)
    return {
        "compute": compute,
        "network": network,
        "storage": storage,
        "scaleup": scaleup,
        "total": compute + network + storage + scaleup,
    }


def fixed_usd_per_hour(
    capex_total_usd: ArrayLike,
    depreciation_years: ArrayLike = DEFAULT_DEPRECIATION_YEARS,
    it_w: ArrayLike = 0.0,
    colo_usd_per_kw_month: ArrayLike = 0.0,
    maintenance_fraction_per_year: ArrayLike = 0.0,
) -> np.ndarray:
    """Owned fixed cost in USD per wall-clock hour: depreciation + colo (per IT kW-month) + maintenance."""
    capex = np.asarray(capex_total_usd, dtype=np.float64)
    dep = capex / (np.asarray(depreciation_years, dtype=np.float64) * HOURS_PER_YEAR)
    colo = np.asarray(it_w, dtype=np.float64) / 1000.0 * np.asarray(colo_usd_per_kw_month, dtype=np.float64)
    maint = capex * np.asarray(maintenance_fraction_per_year, dtype=np.float64) / HOURS_PER_YEAR
    return dep + colo / HOURS_PER_MONTH + maint


def energy_usd_per_hour(facility_w: ArrayLike, electricity_usd_per_kwh: ArrayLike) -> np.ndarray:
    """Electricity cost in USD per hour at full load = facility kW x USD/kWh."""
    return (
        np.asarray(facility_w, dtype=np.float64)
        / 1000.0
        * np.asarray(electricity_usd_per_kwh, dtype=np.float64)
    )


def owned_usd_per_card_hour(
    capex_total_usd: ArrayLike,
    cards: ArrayLike,
    facility_w: ArrayLike,
    electricity_usd_per_kwh: ArrayLike = DEFAULT_ELECTRICITY_USD_PER_KWH,
    depreciation_years: ArrayLike = DEFAULT_DEPRECIATION_YEARS,
    utilization: ArrayLike = 1.0,
    it_w: ArrayLike = 0.0,
    colo_usd_per_kw_month: ArrayLike = 0.0,
    maintenance_fraction_per_year: ArrayLike = 0.0,
) -> np.ndarray:
    """Owned cost in USD per busy card-hour (module docstring); broadcasts over arrays."""
    cards_f = np.asarray(cards, dtype=np.float64)
    fixed = fixed_usd_per_hour(
        capex_total_usd, depreciation_years, it_w, colo_usd_per_kw_month, maintenance_fraction_per_year
    )
    energy = energy_usd_per_hour(facility_w, electricity_usd_per_kwh)
    return fixed / (cards_f * np.asarray(utilization, dtype=np.float64)) + energy / cards_f


def cloud_cost_usd(card_hours: ArrayLike, usd_per_card_hour: ArrayLike) -> np.ndarray:
    """Cloud bill in USD = card-hours x price (USD per card-hour)."""
    return np.asarray(card_hours, dtype=np.float64) * np.asarray(usd_per_card_hour, dtype=np.float64)


def monthly_owned_opex_usd(
    facility_w: ArrayLike,
    electricity_usd_per_kwh: ArrayLike = DEFAULT_ELECTRICITY_USD_PER_KWH,
    it_w: ArrayLike = 0.0,
    colo_usd_per_kw_month: ArrayLike = 0.0,
    capex_total_usd: ArrayLike = 0.0,
    maintenance_fraction_per_year: ArrayLike = 0.0,
) -> np.ndarray:
    """Owned running cost in USD per month of continuous use: energy + colo + maintenance."""
    energy = energy_usd_per_hour(facility_w, electricity_usd_per_kwh) * HOURS_PER_MONTH
    colo = np.asarray(it_w, dtype=np.float64) / 1000.0 * np.asarray(colo_usd_per_kw_month, dtype=np.float64)
    maint = (
        np.asarray(capex_total_usd, dtype=np.float64)
        * np.asarray(maintenance_fraction_per_year, dtype=np.float64)
        / 12
    )
    return energy + colo + maint


def break_even_months(
    capex_total_usd: ArrayLike,
    cards: ArrayLike,
    cloud_usd_per_card_hour: ArrayLike,
    monthly_opex_usd: ArrayLike,
    utilization: ArrayLike = 1.0,
    monthly_energy_usd: ArrayLike = 0.0,
) -> np.ndarray:
    """Months after which owning beats renting at fleet utilization `utilization` (module
    docstring): the busy hours' cloud bill against the busy hours' energy (`monthly_energy_usd`, the
    part of `monthly_opex_usd` drawn at full load) and the rest of the opex every month; USD, months
    of 730 h; inf where it never does."""
    util = np.asarray(utilization, dtype=np.float64)
    energy = np.asarray(monthly_energy_usd, dtype=np.float64)
    cloud = (
        np.asarray(cards, dtype=np.float64)
        * HOURS_PER_MONTH
        * np.asarray(cloud_usd_per_card_hour, dtype=np.float64)
    )
    saving = util * (cloud - energy) - (np.asarray(monthly_opex_usd, dtype=np.float64) - energy)
    capex = np.asarray(capex_total_usd, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(saving > 0, capex / np.where(saving > 0, saving, 1.0), np.inf)


def _months(x: Any) -> Any:
    """Break-even months for JSON: inf -> None (never); arrays -> nested lists."""
    if x is None:
        return None
    arr = np.asarray(x, dtype=np.float64)
    obj = arr.astype(object)
    obj[~np.isfinite(arr)] = None
    return obj.item() if arr.ndim == 0 else obj.tolist()


@dataclass(frozen=True)
class Cost:
    """Cost of the cluster and of one run. Money fields are in USD (floats or arrays); `to_dict()`
    converts to `currency` at `exchange_rate` (currency units per USD)."""

    currency: str
    exchange_rate: float
    capex_compute_usd: Any
    capex_network_usd: Any
    capex_storage_usd: Any
    capex_total_usd: Any
    card_hours: Any
    run_owned_usd: Any
    run_owned_depreciation_usd: Any
    run_owned_energy_usd: Any
    run_owned_facility_usd: Any  # colo + maintenance share
    run_cloud_usd: Any  # None when no cloud price was given
    run_cloud_reserved_usd: Any
    owned_usd_per_card_hour: Any
    cloud_usd_per_card_hour: Any
    cloud_reserved_usd_per_card_hour: Any
    monthly_owned_opex_usd: Any
    cloud_break_even_months: Any  # inf = never
    cloud_reserved_break_even_months: Any
    depreciation_years: Any
    utilization: Any
    electricity_usd_per_kwh: Any
    capex_scaleup_usd: Any = 0.0  # scale-up plane outside the nodes (in capex_total_usd)

    def to_dict(self) -> dict[str, Any]:
        """The contract's `cost` section, money in `currency`; break-even None when never."""

        def money(x: Any) -> Any:
            return None if x is None else plain(np.asarray(x, dtype=np.float64) * self.exchange_rate)

        return {
            "currency": self.currency,
            "exchange_rate": self.exchange_rate,
            "capex": {
                "compute": money(self.capex_compute_usd),
                "network": money(self.capex_network_usd),
                "storage": money(self.capex_storage_usd),
                "scaleup": money(self.capex_scaleup_usd),
                "total": money(self.capex_total_usd),
            },
            "run": {
                "owned": money(self.run_owned_usd),
                "cloud": money(self.run_cloud_usd),
                "cloud_reserved": money(self.run_cloud_reserved_usd),
                "owned_breakdown": {
                    "depreciation": money(self.run_owned_depreciation_usd),
                    "energy": money(self.run_owned_energy_usd),
                    "facility": money(self.run_owned_facility_usd),
                },
            },
            "cloud_break_even_months": _months(self.cloud_break_even_months),
            "cloud_reserved_break_even_months": _months(self.cloud_reserved_break_even_months),
            "owned_per_card_hour": money(self.owned_usd_per_card_hour),
            "cloud_per_card_hour": money(self.cloud_usd_per_card_hour),
            "cloud_reserved_per_card_hour": money(self.cloud_reserved_usd_per_card_hour),
            "monthly_owned_opex": money(self.monthly_owned_opex_usd),
            "electricity_per_kwh": money(self.electricity_usd_per_kwh),
            "card_hours": plain(self.card_hours),
            "depreciation_years": plain(self.depreciation_years),
            "utilization": plain(self.utilization),
        }


def _check(
    value: ArrayLike, field: str, message: str, ok: Callable[[NDArray[np.float64]], ArrayLike]
) -> None:
    if not np.all(ok(np.asarray(value, dtype=np.float64))):
        raise ScenarioError(message, field)


def _check_inputs(cards: ArrayLike, running: RunningPrices) -> None:
    p = running
    _check(
        p.depreciation_years,
        "cost.depreciation_years",
        "Depreciation must be a positive number of years.",
        lambda a: a > 0,
    )
    _check(p.utilization, "cost.utilization", "Utilization must be in (0, 1].", lambda a: (a > 0) & (a <= 1))
    _check(cards, "cluster.cards", "The number of cards must be positive.", lambda a: a > 0)
    _check(
        p.electricity_usd_per_kwh,
        "cost.electricity_per_kwh",
        "The electricity price must not be negative.",
        lambda a: a >= 0,
    )


def _owned(
    capex_total: np.ndarray,
    card_hours: np.ndarray,
    cards: np.ndarray,
    it_w: ArrayLike,
    facility_w: ArrayLike,
    p: RunningPrices,
) -> dict[str, np.ndarray]:
    """The run's owned cost by part (depreciation, facility = colo + maintenance, energy), the
    owned cost per busy card-hour and the owned opex per month (module docstring), USD."""
    util = np.asarray(p.utilization, dtype=np.float64)
    dep_per_h = capex_total / (np.asarray(p.depreciation_years, dtype=np.float64) * HOURS_PER_YEAR)
    fac_per_h = (
        fixed_usd_per_hour(
            capex_total, p.depreciation_years, it_w, p.colo_usd_per_kw_month, p.maintenance_fraction_per_year
        )
        - dep_per_h
    )
    en_per_h = energy_usd_per_hour(facility_w, p.electricity_usd_per_kwh)
    # per busy card-hour, then x card-hours of the run
    return {
        "depreciation": card_hours * dep_per_h / (cards * util),
        "facility": card_hours * fac_per_h / (cards * util),
        "energy": card_hours * en_per_h / cards,
        "per_card_hour": (dep_per_h + fac_per_h) / (cards * util) + en_per_h / cards,
        "energy_per_h": en_per_h,
        "opex_month": monthly_owned_opex_usd(
            facility_w,
            p.electricity_usd_per_kwh,
            it_w,
            p.colo_usd_per_kw_month,
            capex_total,
            p.maintenance_fraction_per_year,
        ),
    }


def _cloud(
    price: ArrayLike | None,
    card_hours: np.ndarray,
    capex_total: np.ndarray,
    cards: np.ndarray,
    own: dict[str, np.ndarray],
    utilization: ArrayLike,
) -> tuple[Any, Any, Any]:
    """(price, the run's cloud bill, break-even months) at one cloud price; Nones when not given.
    `own`: _owned's parts (the opex per month, the energy per full-load hour), USD."""
    if price is None:
        return None, None, None
    p = np.asarray(price, dtype=np.float64)
    if np.any(p < 0):
        raise ScenarioError("Cloud prices must not be negative.", "cost.cloud_price_per_card_hour")
    energy_month = own["energy_per_h"] * HOURS_PER_MONTH
    months = break_even_months(capex_total, cards, p, own["opex_month"], utilization, energy_month)
    return p, cloud_cost_usd(card_hours, p), months


def cost(
    bill: CapexBill,
    hours: ArrayLike,
    it_w: ArrayLike,
    facility_w: ArrayLike,
    running: RunningPrices = DEFAULT_RUNNING,
) -> Cost:
    """Capex, the run's owned and cloud cost and break-even for `bill.cards` over `hours` of wall clock.

    `it_w`/`facility_w` come from `estimator.cluster.power.power()`; card-hours = cards x hours. All
    arguments broadcast. Raises ScenarioError (with the `cost.*` field) for invalid inputs.
    """
    p = running
    rate = exchange_rate(p.currency, p.usd_to_cny)
    _check_inputs(bill.cards, p)
    capex = capex_usd(bill)
    cards_f = np.asarray(bill.cards, dtype=np.float64)
    card_hours = cards_f * np.asarray(hours, dtype=np.float64)
    own = _owned(capex["total"], card_hours, cards_f, it_w, facility_w, p)
    od_price, od_run, od_be = _cloud(
        p.cloud_usd_per_card_hour, card_hours, capex["total"], cards_f, own, p.utilization
    )
    rs_price, rs_run, rs_be = _cloud(
        p.cloud_reserved_usd_per_card_hour, card_hours, capex["total"], cards_f, own, p.utilization
    )
    return Cost(
        currency=p.currency,
        exchange_rate=rate,
        capex_compute_usd=capex["compute"],
        capex_network_usd=capex["network"],
        capex_storage_usd=capex["storage"],
        capex_scaleup_usd=capex["scaleup"],
        capex_total_usd=capex["total"],
        card_hours=card_hours,
        run_owned_usd=own["depreciation"] + own["facility"] + own["energy"],
        run_owned_depreciation_usd=own["depreciation"],
        run_owned_energy_usd=own["energy"],
        run_owned_facility_usd=own["facility"],
        run_cloud_usd=od_run,
        run_cloud_reserved_usd=rs_run,
        owned_usd_per_card_hour=own["per_card_hour"],
        cloud_usd_per_card_hour=od_price,
        cloud_reserved_usd_per_card_hour=rs_price,
        monthly_owned_opex_usd=own["opex_month"],
        cloud_break_even_months=od_be,
        cloud_reserved_break_even_months=rs_be,
        depreciation_years=np.asarray(p.depreciation_years, dtype=np.float64),
        utilization=np.asarray(p.utilization, dtype=np.float64),
        electricity_usd_per_kwh=np.asarray(p.electricity_usd_per_kwh, dtype=np.float64),
    )
