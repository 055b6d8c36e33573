"""The diagnose page: a form for a measured run; the answer in the reader's language (no JavaScript)."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from estimator.errors import ScenarioError
from reports.pages import _throttled

from . import text
from .forms import DiagnoseForm
from .services import run_diagnosis

EXAMPLE = {  # the article's 70B example on Ascend 910B2, with a 45 % communication wait
    "preset": "llama-3.1-70b",
    "accelerator": "ascend-910b2",
    "precision": "bf16",
    "seq_len": 8192,
    "global_batch_tokens": 4194304,
    "cards": 256,
    "tp": 8,
    "pp": 4,
    "step_time_s": 60,
    "compute_s": 31,
    "communication_s": 27,
    "data_loading_s": 1.2,
}


@require_http_methods(["GET", "POST"])
def diagnose(request):
    context: dict = {}
    status = 200
    if request.method == "POST":
        if limited := _throttled(request):
            return limited
        form = DiagnoseForm(request.POST)
        if form.is_valid():
            try:
                out = run_diagnosis(data=form.document(), user=request.user)
            except ScenarioError as exc:
                form.add_core_errors(exc)
                status = 400
            else:
                context = {
                    "summary": text.summary(out),
                    "terms": text.terms(out),
                    "findings": text.findings(out),
                }
        else:
            status = 400
    else:
        form = DiagnoseForm(initial=EXAMPLE)
    return render(request, "diagnosis/diagnose.html", {"form": form, **context}, status=status)
