"""Pages: the form, the report (by share token), its downloads, the recompute diff, validation."""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from api.throttling import AnonRateThrottle, UserRateThrottle
from api.timestamps import rfc3339
from estimator import ENGINE_VERSION, catalog
from estimator.errors import ScenarioError
from estimator.plan.supernode_rules import explain_step_time
from estimator.validation import validation_rows
from reports.money import result_amounts

from . import (
    calibration_block,
    charts,
    compare,
    count_points,
    downloads,
    glossary,
    goodput,
    labels,
    messages,
    selectors,
    services,
    summary,
    working,
    xlsx,
)
from . import formatting as fmt
from .cells import neutralize_row
from .forms import EstimateForm
from .models import Estimate

RUNNER_UP_COLUMNS = [
    "tp",
    "pp",
    "dp",
    "ep",
    "cp",
    "micro_batch_size",
    "virtual_stages",
    "zero_stage",
    "recompute",
    "step_time_s",
    "predicted_mfu",
    "bubble_fraction",
    "memory_bytes",
    "fits",
]


def _throttled(request):
    """The API's anonymous/per-user rate limits also guard the pages that run the estimator; a
    429 page when the budget is spent, else None."""
    for throttle in (AnonRateThrottle(), UserRateThrottle()):
        if not throttle.allow_request(request, None):  # type: ignore[arg-type]  # no view: a page, not an API view
            wait = throttle.wait()
            response = render(request, "reports/throttled.html", {"wait": int(wait or 0) + 1}, status=429)
            response["Retry-After"] = str(int(wait or 0) + 1)
            return response
    return None


def _shared_or_404(token: str) -> Estimate:
    try:
        return selectors.shared_estimate(token=token)
    except Estimate.DoesNotExist:
        raise Http404 from None


def _share_url(request, estimate: Estimate) -> str:
    with translation.override(settings.LANGUAGE_CODE):
        return request.build_absolute_uri(reverse("reports:report", args=[estimate.share_token]))


@require_http_methods(["GET", "POST"])
def new_estimate(request):
    """The form. POST plans and stores the scenario and redirects to its report (no JavaScript needed)."""
    if request.method == "POST":
        if limited := _throttled(request):
            return limited
        form = EstimateForm(request.POST, user=request.user)
        if form.is_valid():
            scenario = form.scenario()
            if form.is_valid():  # building the scenario may add errors (a bad config.json)
                try:
                    estimate = services.create_estimate(
                        data=scenario, owner=request.user, team=form.team_slug()
                    )
                except ScenarioError as exc:
                    form.add_scenario_errors(exc)
                else:
                    return redirect(estimate)
        status = 400
    else:
        initial, copy_name = {}, ""
        token = request.GET.get("copy")
        if token:
            original = _shared_or_404(token)
            initial = EstimateForm.initial_from(original.input)
            # an unnamed report's title as its page shows it, never its share token (its read key)
            copy_name = original.name or str(_("Training cluster plan"))
            if request.GET.get("sizing") == "budget" and initial.get("budget") is not None:
                initial["sizing"] = "budget"  # "plan it by budget" from the budget block
                # the copy is named for what it is: the same scenario sized by its budget
                initial["name"] = str(_("%(name)s, sized by its budget")) % {"name": copy_name}
        form = EstimateForm(initial=initial or None, user=request.user)
        status = 200
        return render(
            request,
            "reports/new.html",
            {"form": form, "copy_of": token, "copy_name": copy_name},
            status=status,
        )
    return render(request, "reports/new.html", {"form": form}, status=status)


def _budget_block(result: dict, cur: str) -> dict | None:
    """The budget status at the top of the report: within or over by how much, and what it buys."""
    b = result.get("budget")
    if not isinstance(b, dict) or b.get("budget") is None:
        return None
    affords = b.get("affords") if isinstance(b.get("affords"), dict) else None
    return {
        "within": bool(b.get("within")),
        "sized_by_budget": bool(b.get("sized_by_budget")),
        "budget": fmt.money(b.get("budget"), cur),
        "capex": fmt.money(b.get("capex"), cur),
        "over_by": fmt.money(b.get("over_by"), cur),
        "headroom": fmt.money(b.get("headroom"), cur),
        "share": fmt.percent(b.get("share"), 0),
        "affords": None
        if affords is None
        else {
            "cards": fmt.count(affords.get("cards")),
            "nodes": fmt.count(affords.get("nodes")),
            "servers": int(affords.get("nodes") or 0),  # the count the sentence's plural follows
            # the most cards the budget buys, where they train slower (plan.budget_choice)
            "most": fmt.count(affords["most_cards"]) if affords.get("most_cards") else None,
            "capex": fmt.money(affords.get("capex"), cur),
            # the median where failures are counted, as the headline of that plan's own report
            "days": fmt.days(
                affords["days_p50"] if affords.get("days_p50") is not None else affords.get("days")
            ),
        },
    }


def build_derived(scenario: dict, result: dict) -> dict:
    """The parts of the report page that follow from the stored scenario and result alone, in the
    active language: headline, tables, story, messages (no request, no user)."""
    cur = summary.currency(result)
    layout = result.get("layout") or {}
    runners = [r for r in layout.get("runners_up") or [] if isinstance(r, dict)]
    columns, rows = summary.table(runners, RUNNER_UP_COLUMNS)
    return {
        "currency": cur,
        "headline": summary.headline(scenario, result),
        "budget": _budget_block(result, cur),
        "calibration": calibration_block.block(result),
        "story": working.story(result),
        "runner_columns": [working.column_label(c) for c in columns],
        "runner_rows": [[working.cell(c, v, cur) for c, v in zip(columns, row, strict=True)] for row in rows],
        "rejected": working.rejected(result),
        "warnings": [messages.warning(w, cur) for w in result.get("warnings") or []],
        "advice": [messages.advice(a, cur) for a in result.get("advice") or []],
        "starting_configuration": [
            messages.setting(row, cur) for row in result.get("starting_configuration") or []
        ],
        "assumptions": [messages.assumption(a, cur) for a in result.get("assumptions") or []],
        "sections": working.tables(result, cur),
        "step_rows": working.step_rows(result),
        "goodput_levers": goodput.levers(result, cur),
        "scenario_json": json.dumps(scenario, indent=2, ensure_ascii=False),
    }


def report_derived(estimate: Estimate) -> dict:
    """build_derived of a stored estimate, cached like its figures (report_figures: same key parts,
    same reasons): formatting its few hundred numbers and labels was about half of the report
    page's server time once the figures were cached (issue 27)."""
    key = f"report-derived:{estimate.share_token}:{ENGINE_VERSION}:{PAGE_BUILD}:{translation.get_language()}"
    return _cached(
        key, lambda: build_derived(estimate.scenario, estimate.result), FIGURES_TTL_S, "report tables"
    )


def _report_context(request, estimate: Estimate) -> dict:
    return {
        **report_derived(estimate),
        "estimate": estimate,
        "scenario": estimate.scenario,
        "result": estimate.result,
        "figures": report_figures(estimate),
        "share_url": _share_url(request, estimate),
        "glossary": glossary.items(),
    }


def build_figures(result: dict, counts: list[dict] | None = None) -> list[dict]:
    """The report's figures as JSON-ready dicts (Plotly's own JSON), in the active language;
    `counts`: the planned points of the cards chart (report_counts)."""
    return [
        {"id": dom_id, "data_id": f"{dom_id}-data", "figure": json.loads(fig.to_json())}
        for dom_id, fig in charts.all_figures(result, counts)
    ]


FIGURES_TTL_S = 7 * 24 * 3600


def _page_build() -> str:
    """A digest of what the cached text is made of besides the result: the compiled translations
    and the report modules' source. A label or translation fix deployed without an engine bump then
    draws anew instead of showing last week's words (the caches below key on it)."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted([*root.glob("*.py"), *(root.parent / "locale").glob("*/LC_MESSAGES/*.mo")]):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:12]


PAGE_BUILD = _page_build()


def report_figures(estimate: Estimate) -> list[dict]:
    """The figures of a stored estimate, cached: a stored estimate never changes (recompute stores
    nothing), and building the Plotly figures was about 70% of the report page's server time. The
    key holds the share token, this code's engine version (a new release draws anew) and the
    language (titles and axis labels are translated)."""
    key = f"report-figures:{estimate.share_token}:{ENGINE_VERSION}:{PAGE_BUILD}:{translation.get_language()}"
    return _cached(
        key, lambda: build_figures(estimate.result, report_counts(estimate)), FIGURES_TTL_S, "report figures"
    )


def report_counts(estimate: Estimate) -> list[dict]:
    """The planned points of the cards chart (reports.count_points: the stored input planned at round
    sizes around its cards by this engine and catalog), cached for every language."""
    key = f"report-counts:{estimate.share_token}:{ENGINE_VERSION}:{catalog.CATALOG_VERSION}"
    return _cached(
        key,
        lambda: count_points.points(estimate.input, estimate.price_book, estimate.result),
        FIGURES_TTL_S,
        "report counts",
    )


@require_GET
def report(request, token: str):
    estimate = _shared_or_404(token)
    response = render(request, "reports/report.html", _report_context(request, estimate))
    response["X-Robots-Tag"] = "noindex"
    return response


@require_GET
def report_json(request, token: str):
    estimate = _shared_or_404(token)
    body = {
        "name": estimate.name,
        "share_url": _share_url(request, estimate),
        "input": estimate.input,
        "scenario": estimate.scenario,
        "result": estimate.result,
        "engine_version": estimate.engine_version,
        "catalog_version": estimate.catalog_version,
        "created_at": rfc3339(estimate.created_at),
    }
    response = JsonResponse(body, json_dumps_params={"indent": 2, "ensure_ascii": False})
    response["Content-Disposition"] = downloads.attachment(estimate.name, estimate.share_token, "json")
    return response


@require_GET
def report_csv(request, token: str):
    """One row per number: section, dotted field, value, and the currency of an amount (scenario
    first, then result)."""
    estimate = _shared_or_404(token)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = downloads.attachment(estimate.name, estimate.share_token, "csv")
    response.write("\ufeff")  # BOM: spreadsheet programs then read UTF-8 (Chinese names) correctly
    writer = csv.writer(response)
    writer.writerow(["part", "field", "value", "currency"])
    writer.writerow(["meta", "engine_version", estimate.engine_version, ""])
    writer.writerow(["meta", "catalog_version", estimate.catalog_version, ""])
    writer.writerow(["meta", "created_at", rfc3339(estimate.created_at), ""])
    amounts = result_amounts(estimate.result)  # amounts as decimal strings, with their currency
    for part, data in (("scenario", estimate.scenario), ("result", estimate.result)):
        for path, value in summary.flatten(data):
            found = amounts.get(path) if part == "result" else None
            plain = "" if value is None else downloads.tidy(value)
            cells = [found["amount"], found["currency"]] if found else [plain, ""]
            writer.writerow(neutralize_row([part, path, *cells]))
    return response


@require_GET
def recompute(request, token: str):
    """Today's engine and catalog on the stored input; shows what changed, stores nothing."""
    estimate = _shared_or_404(token)
    if limited := _throttled(request):
        return limited
    out = services.recompute(estimate=estimate)
    return render(
        request,
        "reports/recompute.html",
        {
            "estimate": estimate,
            "rows": out["rows"],
            "errors": out["error"],
            "today_engine": out.get("engine_version"),
            "today_catalog": out.get("catalog_version"),
            "any_change": any(r["changed"] for r in out["rows"]),
            "book": estimate.price_book,
            "newer_book": out["newer_book"],
        },
    )


_log = logging.getLogger(__name__)


def _cached(key: str, build: Callable[[], Any], ttl_s: int, what: str) -> Any:
    """`build()`, kept in Django's cache under `key` for `ttl_s` seconds. An unreachable cache
    (Redis restarting) costs a rebuild, never the page."""
    try:
        value = cache.get(key)
    except Exception as exc:  # redis.ConnectionError, database errors of the DB cache
        _log.warning("%s not cached: cache unavailable (%s)", what, exc)
        return build()
    if value is None:
        value = build()
        try:
            cache.set(key, value, ttl_s)
        except Exception as exc:
            _log.warning("%s not cached: cache unavailable (%s)", what, exc)
    return value


def _validation_rows() -> list[dict]:
    """The validation rows, cached per engine and catalog version (about two seconds to compute)."""
    key = f"validation-rows:{ENGINE_VERSION}:{catalog.CATALOG_VERSION}"
    return _cached(key, validation_rows, 24 * 3600, "validation rows")


@require_GET
def validation(request):
    rows = _validation_rows()
    suites: dict[str, list[dict]] = {}
    for row in rows:
        suites.setdefault(row["suite"], []).append(row)
    summaries = []
    for suite, items in suites.items():
        errors = sorted(abs(r["error_pct"]) for r in items if r.get("error_pct") is not None)
        median = statistics.median(errors) if errors else None  # of an even count: the mean of the middle two
        summaries.append(
            {
                "suite": suite,
                "label": labels.suite(suite),
                "count": len(items),
                "median_abs_error_pct": median,
                "max_abs_error_pct": errors[-1] if errors else None,
                "rows": [{**r, "metric_label": labels.validation_metric(r.get("metric", ""))} for r in items],
            }
        )
    return render(
        request,
        "reports/validation.html",
        {"suites": summaries, "engine_version": ENGINE_VERSION, "catalog_version": catalog.CATALOG_VERSION},
    )


@require_GET
def my_estimates(request):
    return render(
        request, "reports/mine.html", {"estimates": selectors.estimates_of(user=request.user)[:200]}
    )


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _xlsx_response(body: bytes, disposition: str) -> HttpResponse:
    response = HttpResponse(body, content_type=XLSX)
    response["Content-Disposition"] = disposition
    return response


@require_GET
def report_xlsx(request, token: str):
    estimate = _shared_or_404(token)
    return _xlsx_response(
        xlsx.report_workbook(estimate), downloads.attachment(estimate.name, estimate.share_token, "xlsx")
    )


def _compared(request) -> tuple[list[Estimate], list[str], list[str]]:
    """The reports named by ?r= (tokens or share links, 2-4 of them), the raw entries, and errors."""
    entries = [e for e in request.GET.getlist("r") if e.strip()][: compare.MAX_REPORTS]
    found, errors = [], []
    for entry in entries:
        token = compare.token_of(entry)
        try:
            found.append(selectors.shared_estimate(token=token or ""))
        except Estimate.DoesNotExist:
            errors.append(_("No report found for “%(entry)s”.") % {"entry": entry})
    return found, entries, errors


@require_GET
def compare_reports(request):
    """Side by side: pick 2-4 reports (share tokens or links); the page URL is the share link."""
    estimates, entries, errors = _compared(request)
    reports = [{"scenario": e.scenario, "result": e.result} for e in estimates]
    mine = selectors.estimates_of(user=request.user)[:50] if request.user.is_authenticated else []
    context = {
        "estimates": estimates,
        "entries": entries + [""] * (compare.MAX_REPORTS - len(entries)),
        "errors": errors,
        "rows": compare.rows(reports) if len(estimates) >= 2 else [],
        "mine": mine,
        "query": request.GET.urlencode(),
        "mixed_currencies": len(set(compare.currencies(reports))) > 1,
        "explanation": _domain_explanation(reports),
    }
    return render(request, "reports/compare.html", context, status=200 if not errors else 404)


def _domain_explanation(reports: list[dict[str, Any]]) -> str:
    """For two plans of which one is on supernodes: why their speeds differ (chip x domain size)."""
    if len(reports) != 2:
        return ""
    item = explain_step_time(reports[0]["result"], reports[1]["result"])
    if item is None:
        return ""
    return messages.render(item["code"], item["params"], item["message"])


@require_GET
def compare_xlsx(request):
    estimates, _entries, errors = _compared(request)
    if errors or len(estimates) < 2:
        raise Http404
    return _xlsx_response(
        xlsx.comparison_workbook(estimates),
        downloads.attachment("comparison", estimates[0].share_token, "xlsx"),
    )
