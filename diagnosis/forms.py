"""The diagnose page's form: the run (model, chip, cards, layout, batch) and what was measured."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from estimator import catalog
from estimator.errors import ScenarioError
from reports import messages
from reports.forms import _choices

# form field -> the run document's dotted path (errors of the core go back next to their field)
FIELD_PATHS = {
    "preset": "model.preset",
    "accelerator": "hardware.accelerator",
    "precision": "training.precision",
    "seq_len": "training.seq_len",
    "global_batch_tokens": "training.global_batch_tokens",
    "cards": "cluster.cards",
    "tp": "parallelism.tp",
    "pp": "parallelism.pp",
    "ep": "parallelism.ep",
    "cp": "parallelism.cp",
    "micro_batch_size": "parallelism.micro_batch_size",
    "step_time_s": "measured.step_time_s",
    "compute_s": "measured.compute_s",
    "communication_s": "measured.communication_s",
    "data_loading_s": "measured.data_loading_s",
}


def _positive_int(label: Any, required: bool = False) -> forms.IntegerField:
    return forms.IntegerField(label=label, required=required, min_value=1)


def _seconds(label: Any, required: bool = False) -> forms.FloatField:
    return forms.FloatField(
        label=label, required=required, min_value=0, widget=forms.NumberInput(attrs={"step": "any"})
    )


class DiagnoseForm(forms.Form):
    preset = forms.ChoiceField(label=_("Model"))
    accelerator = forms.ChoiceField(label=_("Accelerator"))
    precision = forms.ChoiceField(label=_("Precision"), choices=[("bf16", "BF16"), ("fp8", "FP8")])
    seq_len = _positive_int(_("Sequence length (tokens)"), True)
    global_batch_tokens = _positive_int(_("Global batch (tokens)"), True)
    cards = _positive_int(_("Cards"), True)
    tp = _positive_int(_("TP"))
    pp = _positive_int(_("PP"))
    ep = _positive_int(_("EP"))
    cp = _positive_int(_("CP"))
    micro_batch_size = _positive_int(_("Micro-batch size"))
    step_time_s = _seconds(_("Measured step time (s)"), True)
    compute_s = _seconds(_("Compute per step (s), from the profiler"))
    communication_s = _seconds(_("Communication wait per step (s), from the profiler"))
    data_loading_s = _seconds(_("Data loading per step (s), from the profiler"))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, entries in (("preset", catalog.presets()), ("accelerator", catalog.accelerators())):
            cast(forms.ChoiceField, self.fields[name]).choices = _choices(entries)

    def document(self) -> dict[str, Any]:
        """The run document of estimator.plan.diagnose (scenario + measured) from the cleaned data."""
        d = self.cleaned_data
        parallelism = {k: d[k] for k in ("tp", "pp", "ep", "cp", "micro_batch_size") if d.get(k)}
        measured = {
            k: d[k]
            for k in ("step_time_s", "compute_s", "communication_s", "data_loading_s")
            if d.get(k) is not None
        }
        return {
            "model": {"preset": d["preset"]},
            "training": {
                "seq_len": d["seq_len"],
                "global_batch_tokens": d["global_batch_tokens"],
                "precision": d["precision"],
            },
            "hardware": {"accelerator": d["accelerator"]},
            "cluster": {"cards": d["cards"]},
            "parallelism": parallelism,
            "measured": measured,
        }

    def add_core_errors(self, exc: ScenarioError) -> None:
        """Each of the core's errors next to the field it names, else at the top of the form."""
        by_path = {path: name for name, path in FIELD_PATHS.items()}
        for err in exc.errors:
            name = by_path.get(err.field)
            if name is None and err.field.startswith("parallelism"):
                name = "tp"
            message = messages.scenario_error(err)
            self.add_error(name, f"{err.field}: {message}" if name is None and err.field else message)
