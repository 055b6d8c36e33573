"""One number per question between the core's plan and what the web serves of it: the API's estimate
JSON has the plan's figures (estimator.plan.compose.estimate, as the CLI prints it), or refuses it
with the plan's codes; and the stored estimate's cards-vs-days chart is drawn (reports.count_points:
today's plan at the stored count agrees with the stored headline), its point at the plan's count
being the plan. Scenarios: tests/estimator/test_surfaces_agree.py's strategy (presets, Ascend
910B/910C and MoE, cards, deadline with or without a chance, budget, MFU given or predicted)."""

from __future__ import annotations

import copy
import math
import os
from typing import Any
from unittest import mock

import pytest
from django.test import Client
from hypothesis import HealthCheck, event, given, settings

from api.throttling import AnonRateThrottle
from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.plan.work_budget import check_work_budget
from reports import count_points
from reports.models import Estimate
from tests.estimator.test_surfaces_agree import FIGURES, scenarios

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]  # a plan, a request and a chart per case


def _get(result: dict[str, Any], path: str) -> Any:
    value: Any = result
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _same(a: Any, b: Any) -> bool:
    """The same figure (JSON keeps a float exactly; a NaN or infinity the JSON writes as null)."""
    if isinstance(a, float) and not math.isfinite(a):
        return b is None
    return a == b


@settings(
    max_examples=int(os.environ.get("AGREE_EXAMPLES", "12")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(scenarios())
def test_the_api_serves_the_plan_and_its_chart_agrees(doc):
    try:
        check_work_budget(copy.deepcopy(doc), None)  # the CLI's and the API's first step
        result, codes = estimate(copy.deepcopy(doc))["result"], None
    except ScenarioError as exc:
        result, codes = None, sorted(e.code for e in exc.errors)
    with mock.patch.object(AnonRateThrottle, "allow_request", return_value=True):  # many cases a minute
        response = Client().post("/api/v1/estimates", doc, content_type="application/json")
    if result is None:
        event("refused")
        assert response.status_code == 400, (doc, response.content[:300])
        assert sorted(e.get("code", "") for e in response.json()["errors"]) == codes, doc
        return
    event("planned")
    assert response.status_code == 201, (doc, response.content[:300])
    served = response.json()["result"]
    moved = {
        f: (_get(result, f), _get(served, f)) for f in FIGURES if not _same(_get(result, f), _get(served, f))
    }
    assert moved == {}, doc
    stored = Estimate.objects.get(share_token=response.json()["share_url"].rstrip("/").rsplit("/", 1)[-1])
    drawn = count_points.points(stored.input, stored.price_book, stored.result)
    own = [p for p in drawn if p["cards"] == result["compute"]["cards"]]
    assert len(own) == 1 and count_points.agrees(own[0], served), doc  # the chart is drawn, the plan's point
