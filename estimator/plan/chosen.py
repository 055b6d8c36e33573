"""What the plan chose before its result is assembled: the cluster (cards, MFU, fabric, layouts) and
its roll-up of time, power and cost. Defined below plan.compose (which builds them) and
plan.sections (which reads them), so both name the same types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from estimator.cluster.network import Fabric
from estimator.cluster.storage import Storage
from estimator.layout.search import LayoutSearch
from estimator.money.rollup import Equipment
from estimator.plan.result_goodput import GoodputSection

# money.rollup.rollup's flat result: dotted names -> numpy scalars, and its objects under "_power",
# "_cost", "_scaleup" (the roll-up is money's and keeps its shape)
Roll = dict[str, Any]


@dataclass(frozen=True)
class ClusterChoice:
    """The plan's cluster: cards, the MFU (given or predicted) and its source, fabric and layouts."""

    cards: int
    mfu: float
    mfu_source: str  # "given" or "predicted"
    fabric: Fabric
    layouts: LayoutSearch
    # sized by a budget that buys more cards than train fastest: the most it buys (plan.budget_choice)
    budget_most_cards: int | None = None


@dataclass(frozen=True)
class Sized:
    """A plan's cluster and its roll-up of time, power and cost (before the result sections):
    FLOPs (money.pricing.model_flops, FLOP and FLOP per token), the peak (FLOP/s per card), the
    storage design, unit prices (USD) and running-cost inputs (USD; PUE, years, utilization), and
    the goodput that decides how long the cluster is held (the roll-up's energy and cost)."""

    flops: dict[str, float]
    peak: float
    choice: ClusterChoice
    storage: Storage
    equipment: Equipment
    prices: dict[str, float]
    roll: Roll
    # result.goodput of this cluster (plan.sizing: its wall may be infinite, goodput_of refuses that)
    goodput: GoodputSection | None = None
