"""The browser form: a manager's handful of fields, advanced sections folded away, and a JSON box
for anything else. It builds a scenario dict (docs/architecture.md#scenario-contract) and maps the core's field paths back
to form fields so an error shows next to the field it is about."""

from __future__ import annotations

import copy
import json
from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from api.amounts import AmountField
from estimator import catalog
from estimator.contract.scenario import ModelSpec
from estimator.dotted import get_path, pop_path, set_path
from estimator.errors import ScenarioError
from estimator.jsonio import loads_strict
from pricebooks.selectors import books_of
from teams.selectors import teams_of

from . import formatting, messages
from .form_bounds import range_validators
from .stack_labels import stack_choices

MODEL_KEYS = set(ModelSpec.model_fields) - {"preset", "params"}


class QuantityField(AmountField):
    """A large count written as 5e11, 500B, 500,000,000 or 5000亿 (reports.amounts)."""

    default_error_messages = {"invalid": _("Enter a number such as 5e11, 500B or 5000亿.")}


def _choices(entries: dict, blank: str | None = None) -> list[tuple[str, str]]:
    out = [("", blank)] if blank is not None else []
    for key, entry in sorted(entries.items(), key=lambda kv: str(getattr(kv[1], "name", kv[0]))):
        out.append((key, f"{getattr(entry, 'name', key)} ({key})"))
    return out


YES_NO_DEFAULT = [("", _("default")), ("yes", _("yes")), ("no", _("no"))]

# form field -> scenario path (the form's part of the contract)
FIELD_PATHS = {
    "name": "name",
    "accelerator": "hardware.accelerator",
    "server": "hardware.server",
    "tokens": "training.tokens",
    "target_days": "cluster.target_days",
    "cards": "cluster.cards",
    "budget": "cost.budget",
    "currency": "cost.currency",
    "seq_len": "training.seq_len",
    "global_batch_tokens": "training.global_batch_tokens",
    "precision": "training.precision",
    "stack": "training.stack",
    "mfu": "efficiency.mfu",
    "tp": "parallelism.tp",
    "pp": "parallelism.pp",
    "ep": "parallelism.ep",
    "micro_batch_size": "parallelism.micro_batch_size",
    "zero_stage": "parallelism.zero_stage",
    "recompute": "parallelism.recompute",
    "switch_ports": "network.switch_ports",
    "port_gbps": "network.port_gbps",
    "oversubscription": "network.oversubscription",
    "rail_optimized": "network.rail_optimized",
    "checkpoint_interval_s": "storage.checkpoint_interval_s",
    "checkpoint_write_s": "storage.checkpoint_write_s",
    "checkpoints_kept": "storage.checkpoints_kept",
    "checkpoint_mode": "training.stack_overrides.checkpoint_mode",
    "spare_nodes": "reliability.spare_nodes",
    "electricity_per_kwh": "cost.electricity_per_kwh",
    "pue": "cost.pue",
    "cloud_price_per_card_hour": "cost.cloud_price_per_card_hour",
    "server_price": "cost.server_price",
    "price_book": "cost.price_book",
}
PATH_FIELDS = {path: name for name, path in FIELD_PATHS.items()} | {
    "team": "team",
    "cluster.deadline_confidence": "deadline_confidence",
}
# The form asks the chance of meeting the deadline in percent; the scenario holds it as a fraction
# (cluster.deadline_confidence, 0.5-0.99).
CONFIDENCE_PATH = "cluster.deadline_confidence"
CONFIDENCE_PERCENT = (50, 99)


def ask_sizing_value(form: forms.Form, data: dict[str, Any]) -> None:
    """The value the chosen sizing needs (cards, target_days or budget) asked for where it is
    empty; a value its own check refused is not missing (that check's error is the one to read).
    The estimate form's and the sweep builder's rule."""
    asks = {
        "deadline": ("target_days", _("Give a deadline in days.")),
        "cards": ("cards", _("Give a card count.")),
        "budget": ("budget", _("Give the budget to size the cluster by.")),
    }
    field, ask = asks.get(str(data.get("sizing")), ("", ""))
    if field and data.get(field) is None and field not in form.errors:
        form.add_error(field, ask)


def confidence_field() -> forms.FloatField:
    """The chance of meeting the deadline in percent (the scenario takes the fraction), as the estimate
    form and the sweep builder ask it."""
    return forms.FloatField(
        label=_("Chance of meeting the deadline (%)"),
        required=False,
        min_value=CONFIDENCE_PERCENT[0],
        max_value=CONFIDENCE_PERCENT[1],
        help_text=_(
            "Sizes the smallest cluster that finishes in time with this chance, counting the MFU range "
            "and the interruptions. Blank: sized at the planned MFU."
        ),
    )


# The folded sections of the form: (legend, fields)
ADVANCED = [
    (_("Training"), ["seq_len", "global_batch_tokens", "precision", "stack"]),
    (_("Layout"), ["mfu", "tp", "pp", "ep", "micro_batch_size", "zero_stage", "recompute"]),
    (_("Network"), ["switch_ports", "port_gbps", "oversubscription", "rail_optimized"]),
    (_("Storage"), ["checkpoint_interval_s", "checkpoint_write_s", "checkpoints_kept"]),
    (_("Failures, checkpoints and restarts"), ["checkpoint_mode", "spare_nodes"]),
    (_("Prices"), ["electricity_per_kwh", "pue", "cloud_price_per_card_hour", "server_price"]),
]


def _merge(base: dict, extra: dict) -> dict:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def _prune(doc: Any) -> Any:
    if isinstance(doc, dict):
        pruned = {k: _prune(v) for k, v in doc.items()}
        return {k: v for k, v in pruned.items() if v not in ({}, None)}
    return doc


def _compact(value: Any) -> Any:
    """5e11 -> "500B" (English) or "5000亿" (Chinese), as a person types it, when that reads back
    exactly (QuantityField parses both); small whole floats -> ints."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if abs(value) >= 1e4:
        text = formatting.big(value).replace(",", "")
        try:
            if QuantityField().to_python(text) == value:
                return text
        except forms.ValidationError:
            pass
        text = f"{value:g}"
        return text if float(text) == value else value
    return int(value) if float(value).is_integer() else value


class EstimateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200, required=False)
    model_source = forms.ChoiceField(
        label=_("Model"),
        choices=[
            ("preset", _("A preset")),
            ("config", _("A Hugging Face config.json")),
            ("params", _("Only its size")),
        ],
        initial="preset",
        widget=forms.RadioSelect,
    )
    preset = forms.ChoiceField(label=_("Preset"), required=False, initial="llama-3.1-70b")
    hf_config = forms.CharField(
        label=_("config.json"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text=_("Paste the model's config.json; fields the estimator does not use are ignored."),
    )
    params_b = forms.FloatField(
        label=_("Parameters (billions)"), required=False, min_value=0.001, max_value=100_000
    )
    accelerator = forms.ChoiceField(label=_("Accelerator"), initial="ascend-910b2")
    server = forms.ChoiceField(
        label=_("Server"), required=False, help_text=_("Default: the accelerator's usual server.")
    )
    tokens = QuantityField(label=_("Training tokens"), help_text=_("e.g. 5e11, 500B or 5000亿"))
    sizing = forms.ChoiceField(
        label=_("Size the cluster by"),
        choices=[
            ("deadline", _("a deadline (how many cards?)")),
            ("cards", _("a card count (how long?)")),
            ("budget", _("a budget (what does it buy?)")),
        ],
        initial="deadline",
        widget=forms.RadioSelect,
    )
    target_days = forms.FloatField(label=_("Deadline (days)"), required=False, initial=30)
    deadline_confidence = confidence_field()
    cards = AmountField(label=_("Cards"), required=False, integer=True)
    budget = AmountField(
        label=_("Budget"),
        required=False,
        help_text=_(
            "The capital budget for buying the cluster. Sizing by budget buys the most cards it "
            "affords; otherwise the report compares the cluster cost with it."
        ),
    )
    currency = forms.ChoiceField(label=_("Currency"), choices=[("USD", "USD"), ("CNY", "CNY")])

    seq_len = AmountField(label=_("Sequence length"), required=False, integer=True)
    global_batch_tokens = QuantityField(label=_("Global batch (tokens)"), required=False)
    precision = forms.ChoiceField(
        label=_("Precision"),
        required=False,
        choices=[("", _("default")), ("bf16", "BF16"), ("fp16", "FP16"), ("fp8", "FP8"), ("fp32", "FP32")],
    )
    stack = forms.ChoiceField(
        label=_("Software stack"),
        required=False,
        help_text=_(
            "The training framework the step time assumes; the report shows the days under every "
            "stack that runs on the accelerator."
        ),
    )
    mfu = forms.FloatField(
        label=_("MFU (0-1)"), required=False, help_text=_("Leave empty to let the layout model predict it.")
    )
    tp = forms.IntegerField(label=_("Tensor parallel (TP)"), required=False)
    pp = forms.IntegerField(label=_("Pipeline parallel (PP)"), required=False)
    ep = forms.IntegerField(label=_("Expert parallel (EP)"), required=False)
    micro_batch_size = forms.IntegerField(label=_("Micro-batch size"), required=False)
    zero_stage = forms.ChoiceField(
        label=_("ZeRO stage"),
        required=False,
        choices=[("", _("search")), ("0", "0"), ("1", "1"), ("2", "2"), ("3", "3")],
    )
    recompute = forms.ChoiceField(
        label=_("Recompute"),
        required=False,
        choices=[
            ("", _("search")),
            ("none", _("none")),
            ("selective", _("selective")),
            ("full", _("full")),
            ("partial", _("partial (fewest layers that fit)")),
        ],
    )
    switch_ports = forms.IntegerField(label=_("Switch ports"), required=False)
    port_gbps = forms.FloatField(label=_("Port speed (Gb/s)"), required=False)
    oversubscription = forms.FloatField(label=_("Oversubscription (down:up)"), required=False)
    rail_optimized = forms.ChoiceField(label=_("Rail-optimized"), required=False, choices=YES_NO_DEFAULT)
    checkpoint_interval_s = forms.FloatField(label=_("Checkpoint interval (s)"), required=False)
    checkpoint_write_s = forms.FloatField(label=_("Checkpoint write window (s)"), required=False)
    checkpoints_kept = forms.IntegerField(label=_("Checkpoints kept"), required=False)
    checkpoint_mode = forms.ChoiceField(
        label=_("Checkpoint mode"),
        required=False,
        choices=[
            ("", _("the stack's default")),
            ("sync", _("synchronous")),
            ("async", _("asynchronous")),
            ("in-memory", _("in memory, replicated")),
        ],
    )
    spare_nodes = forms.IntegerField(
        label=_("Hot standby nodes"),
        required=False,
        min_value=0,
        help_text=_("Bought with the cluster; each takes a failed server's place in minutes."),
    )
    electricity_per_kwh = AmountField(label=_("Electricity (per kWh)"), required=False)
    pue = forms.FloatField(label=_("PUE"), required=False)
    cloud_price_per_card_hour = AmountField(label=_("Cloud price (per card-hour)"), required=False)
    server_price = AmountField(label=_("Server price"), required=False)
    price_book = forms.ChoiceField(
        label=_("Price book"),
        required=False,
        help_text=_("A price book of your team replaces the catalog's prices; the fields above still win."),
    )
    team = forms.ChoiceField(
        label=_("Team"), required=False, help_text=_("Its members will see this estimate.")
    )
    extra = forms.CharField(
        label=_("Other scenario fields (JSON)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text=_('Merged over the fields above, e.g. {"serving": {"context_len": 8192}}.'),
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._team_and_book_choices(user)
        for name, entries in (("preset", catalog.presets()), ("accelerator", catalog.accelerators())):
            cast(forms.ChoiceField, self.fields[name]).choices = _choices(entries)
        cast(forms.ChoiceField, self.fields["server"]).choices = _choices(
            catalog.servers(), blank=str(_("default for the accelerator"))
        )
        cast(forms.ChoiceField, self.fields["stack"]).choices = stack_choices()
        if not self.is_bound and not (self.initial or {}).get("currency"):
            self.initial["currency"] = formatting.default_currency()  # CNY for a Chinese reader
        for name, path in FIELD_PATHS.items():
            widget = self.fields[name].widget
            if isinstance(widget, forms.NumberInput):
                widget.attrs.setdefault("step", "any")
            if isinstance(self.fields[name], forms.FloatField | forms.IntegerField | AmountField):
                self.fields[name].validators.extend(range_validators(path))

    def _team_and_book_choices(self, user) -> None:
        """The signed-in user's teams and their price books (latest version, or pinned by a copy)."""
        teams = list(teams_of(user=user))
        team_field = cast(forms.ChoiceField, self.fields["team"])
        team_field.choices = [("", str(_("only me")))] + [(t.slug, t.name) for t in teams]
        if not self.is_bound and len(teams) == 1:
            self.initial.setdefault("team", teams[0].slug)  # the default of reports.services too
        books = [(b.reference, f"{b.team.name}: {b.name}") for b in books_of(user=user)]
        pinned = (self.initial or {}).get("price_book")
        if pinned and pinned not in dict(books) and pinned.split("@")[0] in dict(books):
            books.append((pinned, pinned))  # "edit a copy" keeps the version the original used
        cast(forms.ChoiceField, self.fields["price_book"]).choices = [
            ("", str(_("the catalog's prices (default)"))),
            *books,
        ]
        self.has_teams = bool(teams)

    def team_slug(self) -> str:
        """The chosen team's slug, "" for "only me" (teams.selectors.team_for)."""
        return str(self.cleaned_data.get("team") or "")

    def advanced_sections(self):
        return [(legend, [self[name] for name in names]) for legend, names in ADVANCED]

    # -- form -> scenario ----------------------------------------------------------------------

    def _config(self) -> dict:
        try:
            config = loads_strict(self.cleaned_data.get("hf_config") or "")
        except ScenarioError as exc:
            self.add_error("hf_config", messages.scenario_error(exc.errors[0]))
            return {}
        if not isinstance(config, dict):
            self.add_error("hf_config", _("Paste a JSON object (the contents of config.json)."))
            return {}
        # the whole config.json: the core reads its names and lists the others (contract.scenario.split_model)
        return config

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        source = data.get("model_source")
        if source == "preset" and not data.get("preset"):
            self.add_error("preset", _("Choose a preset."))
        if source == "config" and not data.get("hf_config"):
            self.add_error("hf_config", _("Paste a config.json."))
        if source == "params" and not data.get("params_b"):
            self.add_error("params_b", _("Give the model's size."))
        ask_sizing_value(self, data)
        if data.get("extra"):
            try:
                extra = loads_strict(data["extra"])
            except ScenarioError as exc:
                err = exc.errors[0]  # a duplicate key or a nesting too deep names its path
                text = messages.scenario_error(err)
                self.add_error("extra", f"{err.field}: {text}" if err.field else text)
            else:
                if not isinstance(extra, dict):
                    self.add_error("extra", _("Give a JSON object."))
                else:
                    data["extra_json"] = extra
        return data

    def scenario(self) -> dict:
        """The scenario dict of a valid form (only what the user set; the core fills defaults)."""
        data = self.cleaned_data
        doc: dict[str, Any] = {}
        source = data["model_source"]
        if source == "preset":
            doc["model"] = {"preset": data["preset"]}
        elif source == "config":
            doc["model"] = self._config()
        else:
            doc["model"] = {"params": data["params_b"] * 1e9}
        skips = {"deadline": {"cards"}, "cards": {"target_days"}, "budget": {"cards", "target_days"}}
        skip = skips[data["sizing"]]
        if data["sizing"] == "deadline" and data.get("deadline_confidence") is not None:
            set_path(doc, CONFIDENCE_PATH, data["deadline_confidence"] / 100)  # 90 -> 0.9
        for name, path in FIELD_PATHS.items():
            value = data.get(name)
            if name in skip or value in (None, ""):
                continue
            if name == "budget" and data["sizing"] == "budget":
                path = "cluster.budget"
            if name == "zero_stage":
                value = int(value)
            elif name == "rail_optimized":
                value = value == "yes"
            set_path(doc, path, value)
        return _merge(doc, copy.deepcopy(data.get("extra_json") or {}))

    def add_scenario_errors(self, exc: ScenarioError) -> None:
        """Put each of the core's errors next to the form field it names (else at the top)."""
        source = (self.cleaned_data or {}).get("model_source")
        model_field = {"preset": "preset", "config": "hf_config", "params": "params_b"}.get(
            str(source), "preset"
        )
        sizing = (self.cleaned_data or {}).get("sizing")
        sizing_field = {"deadline": "target_days", "cards": "cards", "budget": "budget"}.get(
            str(sizing), "target_days"
        )
        extra = self.cleaned_data.get("extra_json") or {}
        for err in exc.errors:
            path = err.field
            name = PATH_FIELDS.get(path)
            if path == "cluster.budget":
                name = "budget"
            empty = name is not None and self.cleaned_data.get(name) in (None, "")
            if empty and get_path(extra, path) is not None:
                name = "extra"  # typed in the JSON box, not the form: shown there with its path
            elif empty and name != sizing_field:
                # a default the user never typed cannot be the fault: the size asked for is
                name = sizing_field
                err = type(err)(
                    err.field,
                    str(_("This size cannot be built with the default equipment (%(detail)s)."))
                    % {"detail": messages.scenario_error(err)},
                )
            if name is None and (path == "model" or path.startswith("model.")):
                name = model_field
            if name is None and path == "cluster":
                name = sizing_field
            if name is None and (path == "parallelism" or path.startswith("parallelism.")):
                name = self._parallelism_field()  # a refused layout: on the fields the user fixed
            if name is None and path and self.cleaned_data.get("extra_json"):
                name = "extra"
            text = messages.scenario_error(err)
            message = text if name not in (None, "extra") else f"{path or _('scenario')}: {text}"
            self.add_error(name, message)

    def _parallelism_field(self) -> str | None:
        """The first layout field of the form the user filled (where a refused layout's error goes)."""
        for name in ("tp", "pp", "ep", "micro_batch_size", "zero_stage", "recompute"):
            if self.cleaned_data.get(name) not in (None, ""):
                return name
        return None

    # -- scenario -> form (edit a copy) --------------------------------------------------------

    @classmethod
    def initial_from(cls, scenario: dict) -> dict:
        """Initial form values for a stored input scenario; what the form has no field for goes
        into the JSON box so nothing is lost."""
        rest = copy.deepcopy(scenario)
        initial: dict[str, Any] = {}
        model = rest.pop("model", {}) or {}
        if set(model) == {"preset"}:
            initial.update(model_source="preset", preset=model["preset"])
        elif set(model) == {"params"}:
            initial.update(model_source="params", params_b=model["params"] / 1e9)
        elif "preset" in model:
            initial.update(model_source="preset", preset=model.pop("preset"))
            rest["model"] = model
        else:
            initial.update(model_source="config", hf_config=json.dumps(model, indent=2))
        inline_accelerator = isinstance((rest.get("hardware") or {}).get("accelerator"), dict)
        for name, path in FIELD_PATHS.items():
            if name == "accelerator" and inline_accelerator:
                continue  # a chip the catalog lacks stays in the JSON box
            value = pop_path(rest, path)
            if value is None:
                continue
            if name == "rail_optimized":
                value = "yes" if value else "no"
            elif name == "zero_stage":
                value = str(value)
            elif not isinstance(cls.base_fields[name], forms.IntegerField) and name != "seq_len":
                value = _compact(value)
            initial[name] = value
        confidence = get_path(rest, CONFIDENCE_PATH)
        if isinstance(confidence, int | float) and not isinstance(confidence, bool):
            pop_path(rest, CONFIDENCE_PATH)  # anything else stays in the JSON box, as typed
            initial["deadline_confidence"] = _compact(round(confidence * 100, 6))  # 0.9 -> 90
        sized_by_budget = pop_path(rest, "cluster.budget")
        if sized_by_budget is not None:
            initial["budget"] = _compact(sized_by_budget)
        initial["sizing"] = (
            "budget"
            if sized_by_budget is not None
            else "cards"
            if initial.get("cards") is not None
            else "deadline"
        )
        if initial.get("name") or scenario.get("name"):
            initial["name"] = str(_("%(name)s (copy)")) % {"name": scenario.get("name") or initial["name"]}
        rest.pop("version", None)
        rest = _prune(rest)
        if rest:
            initial["extra"] = json.dumps(rest, indent=2)
        return initial
