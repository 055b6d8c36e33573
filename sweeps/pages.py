"""Browser pages of sweeps: the new-sweep form, the live report, cancel, and the full estimate of
one scenario. Thin: services do the work, charts draw, templates show."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from api.throttling import client_ip
from estimator.contract import sweep as estimator_sweep
from estimator.errors import ScenarioError
from estimator.plan.batch_budget import MOST_CARDS_FIELD
from estimator.plan.batch_confidence import MISS_FIELD
from reports import formatting as fmt
from reports import labels
from reports import messages as messages_catalogue
from reports.axis_values import axis_value, axis_values
from teams.selectors import may_manage

from . import charts, digests, selectors, services, watchdog
from .builder import MAX_AXES as BUILDER_MAX_AXES
from .builder import SweepBuilderForm
from .models import Sweep
from .ranking import RANKED_IN

SESSION_KEY = "sweep_tokens"  # sweeps this browser started (lets anonymous creators cancel)

EXAMPLE_BASE = {
    "name": "70B dense, 1T tokens",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e12, "seq_len": 4096},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 1024},
    "efficiency": {"mfu": 0.45},
    "cost": {"currency": "USD"},
}
EXAMPLE_AXES = {
    "cluster.cards": {"start": 512, "stop": 8192, "step": 512},
    "hardware.accelerator": ["ascend-910b2", "h100-sxm", "h800-sxm", "a100-sxm-80gb"],
    "efficiency.mfu": [0.35, 0.45, 0.55],
}


def _can_control(request, sweep: Sweep) -> bool:
    if may_manage(user=request.user, obj=sweep):
        return True
    return sweep.owner_id is None and sweep.share_token in request.session.get(SESSION_KEY, [])


def _start(request, data: dict) -> Sweep:
    owner = request.user if request.user.is_authenticated else None
    sweep = services.create_sweep(data=data, owner=owner, client_ip=client_ip(request))
    request.session[SESSION_KEY] = ([*request.session.get(SESSION_KEY, []), sweep.share_token])[-50:]
    return sweep


def _builder_errors(builder: SweepBuilderForm, exc: ScenarioError) -> None:
    """The core's errors on the builder's fields: an axis error on that axis's field picker."""
    rows = {builder.cleaned_data.get(f"axis{i}_field"): i for i in range(1, BUILDER_MAX_AXES + 1)}
    base_fields = {
        "training.tokens": "tokens",
        "cluster.cards": "cards",
        "cluster.target_days": "target_days",
        "cluster.deadline_confidence": "deadline_confidence",
    }
    for e in exc.errors:
        parts = e.field.split(".")
        axis_field = ".".join(parts[1:3]) if parts[0] == "axes" else ""
        message = messages_catalogue.scenario_error(
            e, functools.partial(axis_value, axis_field) if axis_field else repr
        )
        if axis_field:
            i = rows.get(axis_field)
            builder.add_error(f"axis{i}_field" if i else None, f"{e.field}: {message}" if not i else message)
        elif parts[0] == "base" and ".".join(parts[1:]) in base_fields:
            builder.add_error(base_fields[".".join(parts[1:])], message)
        else:
            builder.add_error(None, f"{e.field}: {message}" if e.field else message)


@require_http_methods(["GET", "POST"])
def index(request):
    """The new-sweep builder (fields, no JSON), the JSON form for experts, and the sweeps you started."""
    form = {
        "name": "",
        "base": json.dumps(EXAMPLE_BASE, indent=2),
        "axes": json.dumps(EXAMPLE_AXES, indent=2),
    }
    errors: dict[str, list[str]] = {}
    builder = SweepBuilderForm()
    if request.method == "POST" and request.POST.get("mode") == "builder":
        builder = SweepBuilderForm(request.POST)
        if builder.is_valid():
            try:
                sweep = _start(request, builder.request())
            except ScenarioError as exc:
                _builder_errors(builder, exc)
            else:
                return HttpResponseRedirect(sweep.get_absolute_url())
    elif request.method == "POST":
        form = {k: request.POST.get(k, "") for k in ("name", "base", "axes")}
        data: dict = {"name": form["name"]}
        for key in ("base", "axes"):
            try:
                data[key] = json.loads(form[key])
            except ValueError as exc:
                errors.setdefault(key, []).append(_("not valid JSON: %(error)s") % {"error": exc})
        if not errors:
            try:
                sweep = _start(request, data)
            except ScenarioError as exc:
                for e in exc.errors:
                    key = e.field.split(".", 1)[0] if e.field.split(".", 1)[0] in form else "axes"
                    message = messages_catalogue.scenario_error(e)
                    errors.setdefault(key, []).append(f"{e.field}: {message}" if e.field else message)
            else:
                return HttpResponseRedirect(sweep.get_absolute_url())
    mine: QuerySet[Sweep] | list[Sweep] = []
    if request.user.is_authenticated:
        mine = selectors.sweeps_of(user=request.user).only(
            "name", "status", "total", "done", "share_token", "created_at"
        )[:20]
    else:
        tokens = request.session.get(SESSION_KEY, [])
        mine = Sweep.objects.filter(share_token__in=tokens).only(
            "name", "status", "total", "done", "share_token", "created_at"
        )[:20]
    return render(
        request,
        "sweeps/index.html",
        {"form": form, "errors": errors, "sweeps": mine, "builder": builder},
        status=400 if errors or builder.errors else 200,
    )


def _describer(axes: list[dict], currency: str = "USD"):
    """index -> "Cards 1,024, Accelerator h100-sxm", the values as the reader reads them (axes parsed once)."""
    parsed = services.axes_of(sweep={"axes": axes})

    def describe(index: int) -> str:
        return ", ".join(
            f"{labels.axis(a.field)} {axis_value(a.field, a.values[d], currency)}"
            for a, d in zip(parsed, estimator_sweep.digits(parsed, index), strict=True)
        )

    return describe


def _describe(axes: list[dict], index: int, currency: str = "USD") -> str:
    return _describer(axes, currency)(index)


def _axes_header(sweep: Sweep, currency: str) -> list[dict[str, Any]]:
    """Each axis for the page's header: its label and its first and last values in the reader's words."""
    out = []
    for a in sweep.axes:
        shown = axis_values(a["field"], a["values"], currency)
        out.append({**a, "label": labels.axis(a["field"]), "first": shown[0], "last": shown[-1]})
    return out


def _currency(sweep: Sweep) -> str:
    return (sweep.base.get("cost") or {}).get("currency") or "USD"


def report(request, token: str):
    sweep = get_object_or_404(Sweep, share_token=token)
    watchdog.watchdog(sweep=sweep)
    payload = selectors.status_payload(sweep=sweep, request=request)
    currency = _currency(sweep)
    context: dict[str, Any] = {
        "sweep": sweep,
        "payload": payload,
        "percent": math.floor(100 * sweep.done / sweep.total) if sweep.total else 0,
        "can_control": _can_control(request, sweep),
        "csv_url": reverse("sweeps_api:shared-results", args=[token]) + "?format=csv",
        "json_url": reverse("sweeps_api:shared-results", args=[token]),
        "status_url": reverse("sweeps_api:shared", args=[token]),
        "currency": currency,
        "axes": _axes_header(sweep, currency),
    }
    if sweep.status == Sweep.Status.DONE and sweep.summary:
        summary = sweep.summary
        describe = _describer(sweep.axes, currency)
        budget = _budget(sweep)
        row_money = _row_money(sweep)
        # rows in several currencies are ranked and charted in USD (sweeps.ranking)
        ranked_in = summary.get(RANKED_IN) or currency
        context["ranked_in"] = summary.get(RANKED_IN)
        figures = [("pareto", charts.pareto(summary, describe, ranked_in, _group_of(sweep)))]
        figures += [
            (f"heat-{n}", charts.heatmap(item, sweep.axes, ranked_in))
            for n, item in enumerate(summary["heat"])
        ]
        context["figures"] = [
            {"id": dom_id, "data_id": f"{dom_id}-data", "figure": charts.figure_json(fig)}
            for dom_id, fig in figures
            if fig is not None
        ]
        context["has_heatmaps"] = bool(summary["heat"])
        context["has_pareto"] = any(fig["id"] == "pareto" for fig in context["figures"])
        if summary.get("series"):
            context["series_label"] = labels.axis(summary["series"]["field"])
        context["best"] = _best_tables(sweep, summary, row_money)
        context["budget"] = (
            fmt.money(budget, currency) if budget and not _swept(sweep, *MONEY_FIELDS) else None
        )
        # each row's own budget (swept) or the base's in each row's currency (the currency swept)
        context["budget_per_row"] = _swept(sweep, BUDGET_FIELD) or (
            budget is not None and _swept(sweep, *MONEY_FIELDS)
        )
        context.update(_confidence(sweep))
        codes = summary.get("error_codes") or {}  # plan.batch_reasons (absent from older sweeps)
        refusals = summary.get("error_details") or {}  # a refused group's errors (... and these)
        context["row_errors"] = [
            (messages_catalogue.row_reason(codes.get(message), message, refusals.get(message)), count)
            for message, count in (summary.get("errors") or {}).items()
        ]
    return render(request, "sweeps/report.html", context)


def _confidence(sweep: Sweep) -> dict[str, Any]:
    """Whether the rows are sized for a chance of meeting their deadline and that chance where the
    base gives it (an axis shows it per row); and whether they are sized by deadline at all (the best
    tables then show each row's chance of missing it, as its estimate states it for every deadline)."""
    field = estimator_sweep.CONFIDENCE_FIELD
    cluster = sweep.base.get("cluster") or {}
    q = cluster.get("deadline_confidence")
    swept = _swept(sweep, field)
    confident = swept or _amount(q) is not None
    by_deadline = _swept(sweep, "cluster.target_days") or (
        cluster.get("target_days") is not None and not _swept(sweep, "cluster.cards", "cluster.budget")
    )
    return {
        "confident": confident,
        "confidence": None if swept or _amount(q) is None else fmt.percent(q, 0),
        "miss_column": confident or by_deadline,
    }


def _budget(sweep: Sweep) -> float | None:
    return _amount((sweep.base.get("cost") or {}).get("budget"))


def _amount(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


BUDGET_FIELD = "cost.budget"
MONEY_FIELDS = (selectors.CURRENCY_FIELD, BUDGET_FIELD)  # a row's currency and budget: swept or the base's


def _swept(sweep: Sweep, *fields: str) -> bool:
    return any(a["field"] in fields for a in sweep.axes)


def _row_money(sweep: Sweep) -> Callable[[int], tuple[str, float | None]]:
    """index -> (currency, budget) of that row: its scenario's (the one its "Full estimate" plans),
    so with cost.currency or cost.budget as an axis each row reads in its own currency and is
    flagged over its own budget, not the base's."""
    if not _swept(sweep, *MONEY_FIELDS):
        currency, budget = _currency(sweep), _budget(sweep)
        return lambda _index: (currency, budget)
    axes = services.axes_of(sweep=sweep)

    def of(index: int) -> tuple[str, float | None]:
        cost = estimator_sweep.scenario_at(sweep.base, axes, index).get("cost") or {}
        return str(cost.get("currency") or "USD"), _amount(cost.get("budget"))

    return of


def _group_of(sweep: Sweep):
    """index -> the group of that scenario on the time-cost chart: its value on the series axis
    (digests.series_axis: models, else chips), else its accelerator (the axis value or the base's)."""
    axes = services.axes_of(sweep=sweep)
    where = digests.series_axis(axes)
    if where is None:
        where = next((i for i, a in enumerate(axes) if a.field == "hardware.accelerator"), None)
    base = (sweep.base.get("hardware") or {}).get("accelerator", "")
    base = base.get("name", "custom") if isinstance(base, dict) else str(base)

    def group_of(index: int) -> str:
        if where is None:
            return base
        return str(axes[where].values[estimator_sweep.digits(axes, index)[where]])

    return group_of


def _best_rows(axes, rows: list[dict], row_money: Callable[[int], tuple[str, float | None]]) -> list[dict]:
    out = []
    for r in rows:
        ds = estimator_sweep.digits(axes, r["index"])
        capex = r.get("cost.capex.total")
        currency, budget = row_money(r["index"])
        out.append(
            {
                "index": r["index"],
                "inputs": [axis_value(a.field, a.values[d], currency) for a, d in zip(axes, ds, strict=True)],
                "planned_on_axis": _planned_on_axis(axes, ds, r.get("compute.cards")),
                "days": fmt.days(r.get(digests.DAYS)),
                "cards": fmt.count(r.get("compute.cards")),
                "capex": fmt.money(capex, currency),
                "owned": fmt.money(r.get(digests.COST_OWNED), currency),
                "cloud": fmt.money(r.get(digests.COST_CLOUD), currency),
                # sized for a chance of meeting the deadline: the row's chance of missing it (estimate's)
                "miss": fmt.percent(r.get(MISS_FIELD)),
                # sized by a budget that buys more cards, which train slower: the most it buys
                "most_cards": _most_cards(r.get(MOST_CARDS_FIELD)),
                "over_budget": budget is not None and isinstance(capex, int | float) and capex > budget,
            }
        )
    return out


def _planned_on_axis(axes, digits: list[int], cards: Any) -> bool:
    """Whether the row's plan has exactly its cluster.cards axis value: its cards column would
    repeat the axis's (one number per question, _cards_column)."""
    where = next((i for i, a in enumerate(axes) if a.field == "cluster.cards"), None)
    return where is not None and cards == axes[where].values[digits[where]]


def _cards_column(rows: list[dict]) -> bool:
    """The plan's cards as a column of their own unless every row's equal its cluster.cards axis value."""
    return not rows or not all(r["planned_on_axis"] for r in rows)


def _most_cards(value: Any) -> str | None:
    """The most cards a row's budget buys when its plan takes fewer (NaN/None elsewhere)."""
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return fmt.count(value)


def _best_tables(
    sweep: Sweep, summary: dict, row_money: Callable[[int], tuple[str, float | None]]
) -> list[dict]:
    """The best configurations: per metric over the whole sweep, or, for a sweep over models or
    chips, one table per series (its fastest configurations)."""
    fields = [labels.axis(a["field"]) for a in sweep.axes]
    axes = services.axes_of(sweep=sweep)
    series = summary.get("series")
    if series:
        return [
            {
                "metric": digests.DAYS,
                "label": f"{charts.label(digests.DAYS)} · {value}",
                "series": value,
                "colour": charts.COLORS[i % len(charts.COLORS)],  # the series' colour on the chart
                "fields": fields,
                "rows": (best := _best_rows(axes, rows, row_money)),
                "cards_column": _cards_column(best),
            }
            for i, value in enumerate(series["values"])
            if (rows := (series["best"].get(value) or {}).get(digests.DAYS))
        ]
    tables = []
    for metric in (digests.DAYS, "cost.capex.total", digests.COST_OWNED, digests.COST_CLOUD):
        rows = summary.get("best", {}).get(metric)
        if rows:
            best = _best_rows(axes, rows, row_money)
            tables.append(
                {
                    "metric": metric,
                    "label": charts.label(metric),
                    "fields": fields,
                    "rows": best,
                    "cards_column": _cards_column(best),
                }
            )
    return tables


@require_POST
def cancel(request, token: str):
    sweep = get_object_or_404(Sweep, share_token=token)
    if not _can_control(request, sweep):
        raise Http404
    if services.cancel(sweep=sweep):
        messages.info(request, _("Sweep cancelled; chunks already stored are kept."))
    return HttpResponseRedirect(sweep.get_absolute_url())


def scenario_json(request, token: str, index: int):
    """The full scenario of one row of the sweep, as JSON (POST it to /api/v1/estimates)."""
    sweep = get_object_or_404(Sweep, share_token=token)
    if not 0 <= index < sweep.total:
        raise Http404
    return JsonResponse(selectors.scenario_of(sweep=sweep, index=index), json_dumps_params={"indent": 2})


@require_POST
def estimate(request, token: str, index: int):
    """Plan one scenario of the sweep in full (layout, network, storage...) as a saved estimate, and
    open its report."""
    from reports.services import create_estimate

    sweep = get_object_or_404(Sweep, share_token=token)
    if not 0 <= index < sweep.total:
        raise Http404
    scenario = selectors.scenario_of(sweep=sweep, index=index)
    scenario["name"] = (
        f"{sweep.name or _('Sweep')} #{index}: {_describe(sweep.axes, index, _currency(sweep))}"[:200]
    )
    try:
        est = create_estimate(data=scenario, owner=request.user, price_books=sweep.price_books)
    except ScenarioError as exc:
        messages.error(request, str(exc))
        return HttpResponseRedirect(sweep.get_absolute_url())
    return HttpResponseRedirect(est.get_absolute_url())
