"""A web worker's warm-up before its first request (issue 27: the first request after a worker
started cost 3.3x a warm one). What Django and the libraries do once per process, on first use,
is done here instead, from config.wsgi, so a worker (gunicorn imports config.wsgi in each worker
before it accepts connections; workers are recycled every ~2,000 requests) answers its first
request like its hundredth:

- the URLconf: importing every view module (the report page's pulls in Plotly, openpyxl and the
  scenario's JSON Schema) and the per-language reverse tables of `{% url %}` and `reverse`;
- the templates: the project's templates compiled into the cached template loader;
- the modules Django and the report page import on a first request: the context processors, the
  session serializer, the messages storage, the cache backend, the SQL compiler, each language's
  format module, the report tags' `|typed` helper;
- the translation catalogues of every language (`settings.LANGUAGES`);
- the report page's pure parts for one small plan, in every language: the plan itself (the
  scenario contract's validators are built on first use), its Plotly figures (Plotly builds its
  property validators on first use) and its formatted tables (Babel loads its locale data).

Then `freeze_heap` moves every object made so far (the modules, the URLconf, the templates, the
catalogues, Plotly's validators: ~200,000 objects) into the collector's permanent generation: a
full (generation-2) collection walks them no more. Unfrozen, one such pass cost ~70 ms and came
once every ~20-30 405B plans, inside a request (issue 27).

Nothing here reads or writes the database or the cache, and a failure is logged and swallowed: a
warm-up never stops a worker from serving. Only the web entry point calls it (gunicorn's workers,
and `manage.py runserver`, which serves config.wsgi too); other commands, the Celery workers and
the tests start no slower.
"""

from __future__ import annotations

import gc
import importlib
import logging
import time
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)

# A small plan whose report draws the usual charts (step time, memory, cards vs days, cost,
# network, storage, goodput): Llama 3.1 8B on 64 H100 cards, the catalog's defaults otherwise.
SAMPLE_SCENARIO: dict[str, Any] = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 2e11},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 64},
}


def _urls() -> None:
    from django.conf import settings
    from django.urls import get_resolver, reverse
    from django.utils import translation

    get_resolver().url_patterns  # noqa: B018 (the import of every view module is the point)
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            translation.gettext("Report")  # the language's catalogues, loaded once per process
            reverse("reports:new")  # the resolver's reverse tables of this language


def _templates() -> None:
    from django.conf import settings
    from django.template.loader import get_template

    engines: list[dict[str, Any]] = settings.TEMPLATES
    for config in engines:
        for folder in map(Path, config.get("DIRS", [])):
            for path in sorted(folder.rglob("*.html")):
                get_template(path.relative_to(folder).as_posix())


def _lazy_imports() -> None:
    from django.conf import settings
    from django.core.cache import caches
    from django.utils import formats, translation
    from django.utils.module_loading import import_string

    engines: list[dict[str, Any]] = settings.TEMPLATES
    for config in engines:
        for name in config.get("OPTIONS", {}).get("context_processors", []):
            import_string(name)
    import_string(settings.SESSION_SERIALIZER)
    import_string(settings.MESSAGE_STORAGE)
    caches["default"]  # the backend module, imported (it connects on first use)
    importlib.import_module("django.db.models.sql.compiler")  # the first query's
    importlib.import_module("reports.typed")  # reports.templatetags.report_tags.typed's
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            formats.get_format("DECIMAL_SEPARATOR")  # django.conf.locale.<code>.formats


def _report_parts() -> None:
    from django.conf import settings
    from django.utils import translation

    from reports import count_points, pages, services

    out = services.run_estimate(data=SAMPLE_SCENARIO)  # the stored form (strict JSON), no database
    counts = count_points.points(SAMPLE_SCENARIO, None, out["result"])  # the cards chart's plans
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            pages.build_figures(out["result"], counts)
            pages.build_derived(out["scenario"], out["result"])


def warm_up() -> float:
    """Do each first-use cost once; the seconds it took (logged). Never raises."""
    t0 = time.perf_counter()
    for step in (_urls, _templates, _lazy_imports, _report_parts):
        try:
            step()
        except Exception:  # a warm-up must never keep a worker from serving
            _log.warning("web warm-up: %s skipped", step.__name__, exc_info=True)
    seconds = time.perf_counter() - t0
    _log.info("web warm-up took %.0f ms", seconds * 1e3)
    return seconds


def freeze_heap() -> int:
    """Collect once, then move every surviving object into the permanent generation (gc.freeze,
    Python >= 3.7), which no later collection examines; the number of objects frozen. Called after
    the warm-up, so the process's long-lived objects (code, settings, caches filled by the warm-up)
    stop costing each full collection. Nothing is leaked: frozen objects are never freed by the
    collector, and these live as long as the process anyway."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
