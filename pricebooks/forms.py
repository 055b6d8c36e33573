"""The browser's price-book form: an editable table of every catalog id (no JavaScript), a blank
cell meaning "the catalog's price". The core validates the prices document it builds
(estimator.contract.price_book); its errors land on the cell they name."""

from __future__ import annotations

import datetime
from typing import Any

from django import forms
from django.core.validators import MinValueValidator
from django.utils.translation import gettext_lazy as _

from api.amounts import AmountField
from api.field_text import field_text
from api.locale import default_currency
from estimator.contract.price_book import KINDS
from estimator.contract.price_book import entries as _entries
from estimator.errors import ScenarioError

from .models import PriceBookVersion

KIND_LABELS = {
    "accelerators": _("Accelerator cards (price per card)"),
    "servers": _("Servers (chassis without its accelerator cards)"),
    "switches": _("Switches"),
    "transceivers": _("Transceivers"),
    "drives": _("Drives"),
    "cloud": _("Cloud rates per card-hour (on demand / reserved)"),
}
CLOUD_RATES = ("on_demand", "reserved")


def _catalog_price(kind: str, entry: Any, rate: str = "") -> float:
    if kind == "servers":
        return float(entry.chassis_price_usd)
    if kind == "cloud":
        return float(
            entry.cloud_price_usd_per_card_hour
            if rate == "on_demand"
            else entry.cloud_reserved_usd_per_card_hour
        )
    return float(entry.price_usd)


def cell(kind: str, entry_id: str, rate: str = "") -> str:
    """The form field of one price: `servers__dgx-h100`, `cloud__h100-sxm__reserved`."""
    return "__".join(p for p in (kind, entry_id, rate) if p)


class PriceBookForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
    currency = forms.ChoiceField(label=_("Currency"), choices=PriceBookVersion.Currency.choices)
    price_date = forms.DateField(
        label=_("Price date"),
        help_text=_("The date the prices are quoted for (YYYY-MM-DD)."),
        initial=datetime.date.today,
    )
    electricity_per_kwh = AmountField(
        label=_("Electricity (per kWh)"), required=False, validators=[MinValueValidator(0)]
    )

    def __init__(self, *args, teams=None, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound and not (self.initial or {}).get("currency"):
            self.initial["currency"] = default_currency()  # CNY for a Chinese reader
        if teams is not None:  # a new book: which team owns it
            self.fields["team"] = forms.ChoiceField(
                label=_("Team"), choices=[(t.slug, t.name) for t in teams]
            )
        self.table: list[dict[str, Any]] = []
        for kind in (*KINDS, "cloud"):
            rows = []
            for entry_id, entry in sorted(_entries(kind).items()):
                names = []
                for rate in CLOUD_RATES if kind == "cloud" else ("",):
                    name = cell(kind, entry_id, rate)
                    self.fields[name] = AmountField(
                        required=False,
                        validators=[MinValueValidator(0)],
                        label=f"{entry.name} {rate.replace('_', ' ')}".strip(),
                        widget=forms.TextInput(
                            attrs={
                                "inputmode": "decimal",
                                "placeholder": f"{_catalog_price(kind, entry, rate):g}",
                            }
                        ),
                    )
                    names.append(name)
                rows.append({"id": entry_id, "name": entry.name, "cells": names})
            self.table.append({"kind": kind, "label": KIND_LABELS[kind], "rows": rows})

    def sections(self) -> list[dict[str, Any]]:
        return [
            {**s, "rows": [{**r, "cells": [self[n] for n in r["cells"]]} for r in s["rows"]]}
            for s in self.table
        ]

    def version_fields(self) -> dict[str, Any]:
        """What a valid form gives a new version: name, currency, price date and the prices."""
        data = self.cleaned_data
        return {
            "name": data["name"],
            "currency": data["currency"],
            "price_date": data["price_date"],
            "prices": self.prices(),
        }

    def prices(self) -> dict[str, Any]:
        """The prices document of a valid form: only the cells that were filled."""
        data = self.cleaned_data
        doc: dict[str, Any] = {}
        for kind in KINDS:
            filled = {i: data[cell(kind, i)] for i in _entries(kind) if data.get(cell(kind, i)) is not None}
            if filled:
                doc[kind] = filled
        cloud = {}
        for i in _entries("cloud"):
            rates = {
                r: data[cell("cloud", i, r)] for r in CLOUD_RATES if data.get(cell("cloud", i, r)) is not None
            }
            if rates:
                cloud[i] = rates
        if cloud:
            doc["cloud"] = cloud
        if data.get("electricity_per_kwh") is not None:
            doc["electricity_per_kwh"] = data["electricity_per_kwh"]
        return doc

    @staticmethod
    def initial_from(version: PriceBookVersion) -> dict[str, Any]:
        initial: dict[str, Any] = {
            "name": version.book.name,
            "currency": version.currency,
            "price_date": version.price_date,
        }
        prices = version.prices or {}
        for kind in KINDS:
            for entry_id, value in (prices.get(kind) or {}).items():
                initial[cell(kind, entry_id)] = value
        for entry_id, rates in (prices.get("cloud") or {}).items():
            for rate, value in rates.items():
                initial[cell("cloud", entry_id, rate)] = value
        if prices.get("electricity_per_kwh") is not None:
            initial["electricity_per_kwh"] = prices["electricity_per_kwh"]
        return initial

    def add_core_errors(self, exc: ScenarioError) -> None:
        """The core's errors on the cell they name (`prices.servers.dgx-h100`), else at the top."""
        for err in exc.errors:
            parts = err.field.split(".")
            name = None
            if parts[:1] == ["prices"] and len(parts) >= 3:
                name = cell(parts[1], parts[2], parts[3] if len(parts) > 3 else "")
            elif parts[:1] == ["prices"] and len(parts) == 2:
                name = parts[1] if parts[1] in self.fields else None
            elif err.field in self.fields:
                name = err.field
            self.add_error(name if name in self.fields else None, field_text(err))
