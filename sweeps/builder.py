"""The sweep builder: a form for people who do not write JSON. A base scenario from a few fields,
and up to MAX_AXES axes, each a field picked from a list with values picked from the catalog
(chips, servers, model presets), a range (start, stop, step) or a typed list. It builds the same
request the JSON form posts ({name, base, axes}); the core validates it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, cast

from django import forms
from django.core.validators import MinValueValidator
from django.utils.translation import gettext_lazy as _

from api.amounts import AmountField
from estimator import catalog
from reports import axis_values, formatting, labels
from reports.forms import CONFIDENCE_PERCENT, QuantityField, ask_sizing_value, confidence_field

MAX_AXES = 3

# field -> catalog kind, or None for numbers (each labelled by reports.labels.axis)
AXIS_FIELDS: dict[str, str | None] = {
    "hardware.accelerator": "accelerators",
    "hardware.server": "servers",
    "model.preset": "presets",
    "cluster.cards": None,
    "cluster.target_days": None,
    "cluster.budget": None,
    "cluster.deadline_confidence": None,  # asked in percent as the base's, sent as fractions
    "training.tokens": None,
    "efficiency.mfu": None,
    "network.oversubscription": None,
    "network.switch_ports": None,
    "training.global_batch_tokens": None,
    "training.seq_len": None,
    "cost.server_price": None,
    "cost.cloud_price_per_card_hour": None,
    "cost.electricity_per_kwh": None,
    "cost.pue": None,
}
INTEGER_FIELDS = {"cluster.cards", "network.switch_ports", "training.seq_len"}
PERCENT_FIELDS = axis_values.PERCENT  # the builder asks percent, the scenario takes fractions
CATALOGS: dict[str, Callable[[], Mapping[str, Any]]] = {
    "accelerators": catalog.accelerators,
    "servers": catalog.servers,
    "presets": catalog.presets,
}


def _choices(kind: str) -> list[tuple[str, str]]:
    entries = CATALOGS[kind]()
    return sorted(((k, f"{getattr(v, 'name', k)} ({k})") for k, v in entries.items()), key=lambda c: c[1])


class SweepBuilderForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200, required=False)
    preset = forms.ChoiceField(label=_("Model preset"), initial="llama-3.1-70b")
    accelerator = forms.ChoiceField(label=_("Accelerator"), initial="ascend-910b2")
    tokens = QuantityField(label=_("Training tokens"), initial="1T", help_text=_("e.g. 5e11, 500B or 5000亿"))
    sizing = forms.ChoiceField(
        label=_("Size the cluster by"),
        choices=[
            ("cards", _("a card count (how long?)")),
            ("deadline", _("a deadline (how many cards?)")),
            ("budget", _("a budget (what does it buy?)")),
        ],
        initial="cards",
        widget=forms.RadioSelect,
    )
    cards = AmountField(
        label=_("Cards"), required=False, integer=True, initial=1024, validators=[MinValueValidator(1)]
    )
    target_days = forms.FloatField(label=_("Deadline (days)"), required=False, min_value=0.01, initial=30)
    # as the estimate form asks it (percent; the scenario takes the fraction), with the deadline only
    deadline_confidence = confidence_field()
    mfu = forms.FloatField(
        label=_("MFU (0-1)"),
        required=False,
        min_value=0.01,
        max_value=1,
        initial=0.45,
        help_text=_("A sweep is fastest with a given MFU; leave empty to let the layout model predict it."),
    )
    currency = forms.ChoiceField(label=_("Currency"), choices=[("USD", "USD"), ("CNY", "CNY")])
    budget = AmountField(label=_("Budget"), required=False, validators=[MinValueValidator(0.01)])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["preset"]).choices = _choices("presets")
        cast(forms.ChoiceField, self.fields["accelerator"]).choices = _choices("accelerators")
        if not self.is_bound:
            self.initial.setdefault("currency", formatting.default_currency())
        field_choices = [("", _("(not used)"))] + [(k, _choice_label(k)) for k in AXIS_FIELDS]
        for i in range(1, MAX_AXES + 1):
            self.fields[f"axis{i}_field"] = forms.ChoiceField(
                label=_("Axis %(n)s: field") % {"n": i}, choices=field_choices, required=False
            )
            for kind in CATALOGS:
                self.fields[f"axis{i}_{kind}"] = forms.MultipleChoiceField(
                    label=_("Values from the catalog"),
                    choices=_choices(kind),
                    required=False,
                    widget=forms.SelectMultiple(attrs={"size": 6, "class": f"catalog catalog-{kind}"}),
                )
            # a range of cards, tokens or prices reads 5000万 or 8K like any amount
            self.fields[f"axis{i}_start"] = AmountField(label=_("From"), required=False)
            self.fields[f"axis{i}_stop"] = AmountField(label=_("To (included)"), required=False)
            self.fields[f"axis{i}_step"] = AmountField(label=_("Step"), required=False)
            self.fields[f"axis{i}_list"] = forms.CharField(
                label=_("Or a list of values"),
                required=False,
                help_text=_("Separated by commas, e.g. 512, 1024, 2048 or 500B, 1T"),
            )
        if not self.is_bound:
            self.initial.update(
                axis1_field="hardware.accelerator",
                axis1_accelerators=["ascend-910b2", "h100-sxm", "h800-sxm"],
                axis2_field="cluster.cards",
                axis2_start=512,
                axis2_stop=4096,
                axis2_step=512,
            )

    def axes_rows(self) -> list[dict[str, Any]]:
        """The bound fields of each axis row, for the template."""
        return [
            {
                "n": i,
                "field": self[f"axis{i}_field"],
                "catalogs": [(kind, self[f"axis{i}_{kind}"]) for kind in CATALOGS],
                "range": [self[f"axis{i}_start"], self[f"axis{i}_stop"], self[f"axis{i}_step"]],
                "list": self[f"axis{i}_list"],
            }
            for i in range(1, MAX_AXES + 1)
        ]

    def _axis(self, i: int, data: dict) -> Any:
        values = self._axis_values(i, data)
        if values is None or data.get(f"axis{i}_field") not in PERCENT_FIELDS:
            return values
        return self._fractions(i, values)

    def _fractions(self, i: int, values: list | dict) -> Any:
        """A percent axis (50-99, as the base's field) as the fractions the scenario takes: 90 -> 0.9."""
        low, high = CONFIDENCE_PERCENT
        bounds = values if isinstance(values, list) else [values["start"], values["stop"]]
        if any(not low <= v <= high for v in bounds):
            where = f"axis{i}_list" if isinstance(values, list) else f"axis{i}_start"
            self.add_error(
                where, _("Give chances between %(low)s%% and %(high)s%%.") % {"low": low, "high": high}
            )
            return None
        if isinstance(values, list):
            return [_fraction(v) for v in values]
        return {k: _fraction(v) for k, v in values.items()}

    def _axis_values(self, i: int, data: dict) -> Any:
        field = data.get(f"axis{i}_field")
        if not field:
            return None
        kind = AXIS_FIELDS[field]
        if kind:
            values = data.get(f"axis{i}_{kind}") or []
            if not values:
                self.add_error(f"axis{i}_{kind}", _("Pick at least one value."))
            return list(values)
        start, stop, step = (data.get(f"axis{i}_{k}") for k in ("start", "stop", "step"))
        text = (data.get(f"axis{i}_list") or "").strip()
        if text:
            out = []
            for part in re.split(r"[,，;\s]+", text):
                if not part:
                    continue
                try:
                    out.append(QuantityField().to_python(part))
                except forms.ValidationError as exc:
                    below = exc.code == "min_value"  # a number, below zero (api.amounts)
                    words = _("“%(value)s” is below zero.") if below else _("“%(value)s” is not a number.")
                    self.add_error(f"axis{i}_list", words % {"value": part})
                    return None
            return [int(v) if field in INTEGER_FIELDS else v for v in out]
        if start is None or stop is None or step is None:
            self.add_error(f"axis{i}_start", _("Give a range (from, to, step) or a list of values."))
            return None
        as_int = field in INTEGER_FIELDS
        return {
            "start": int(start) if as_int else start,
            "stop": int(stop) if as_int else stop,
            "step": int(step) if as_int else step,
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        ask_sizing_value(self, data)
        axes: dict[str, Any] = {}
        for i in range(1, MAX_AXES + 1):
            axis = self._axis(i, data)
            if axis is None:
                continue
            field = data[f"axis{i}_field"]
            if field in axes:
                self.add_error(f"axis{i}_field", _("This field is already an axis."))
            axes[field] = axis
        if not axes and not self.errors:
            self.add_error("axis1_field", _("Pick at least one axis."))
        data["axes_dict"] = axes
        return data

    def request(self) -> dict[str, Any]:
        """{name, base, axes} for sweeps.services.create_sweep."""
        d = self.cleaned_data
        base: dict[str, Any] = {
            "name": d.get("name") or "",
            "model": {"preset": d["preset"]},
            "training": {"tokens": d["tokens"]},
            "hardware": {"accelerator": d["accelerator"]},
            "cluster": _cluster(d),
            "cost": {"currency": d["currency"]},
        }
        if d.get("mfu") is not None:
            base["efficiency"] = {"mfu": d["mfu"]}
        if d.get("budget") is not None and d["sizing"] != "budget":  # flags the rows over it
            base["cost"]["budget"] = d["budget"]
        if d["sizing"] == "deadline" and d.get("deadline_confidence") is not None:
            base["cluster"]["deadline_confidence"] = d["deadline_confidence"] / 100  # 90 -> 0.9
        return {"name": d.get("name") or "", "base": base, "axes": d["axes_dict"]}


def _choice_label(field: str) -> str:
    """An axis field as the picker lists it: its label, "(%)" when asked in percent, and its path."""
    unit = " (%)" if field in PERCENT_FIELDS else ""
    return f"{labels.axis(field)}{unit} · {field}"


def _fraction(percent: float) -> float:
    """A percent as a fraction, to 12 significant digits (90 -> 0.9, not 0.9000000000000001)."""
    return float(f"{percent / 100:.12g}")


def _cluster(d: Mapping[str, Any]) -> dict[str, Any]:
    """The base's cluster by the sizing chosen: the cards, the deadline or the budget (which then
    sizes the cluster, as the estimate form's does, instead of flagging the rows over it)."""
    if d["sizing"] == "cards":
        return {"cards": d["cards"]}
    if d["sizing"] == "budget":
        return {"budget": d["budget"]}
    return {"target_days": d["target_days"]}
