"""What the sections read of the plan's choices, typed structurally: plan.compose imports the
sections, so the sections name what they need of compose's types as Protocols."""

from __future__ import annotations

from typing import Any, Protocol

from estimator.cluster.network import Fabric
from estimator.layout.search import LayoutSearch


class Choice(Protocol):
    """What plan.ClusterChoice provides (structural: sections does not import plan, plan imports it)."""

    @property
    def cards(self) -> int: ...
    @property
    def mfu(self) -> float: ...
    @property
    def mfu_source(self) -> str: ...
    @property
    def fabric(self) -> Fabric: ...
    @property
    def layouts(self) -> LayoutSearch: ...


class Prices(Protocol):
    """What plan.Equipment provides: unit prices (USD) and where each came from."""

    @property
    def server_price_usd(self) -> float: ...
    @property
    def switch_price_usd(self) -> float: ...
    @property
    def transceiver_price_usd(self) -> float: ...
    @property
    def sources(self) -> dict[str, str]: ...


Roll = dict[str, Any]  # money.rollup.rollup's flat result (names -> arrays / objects)
