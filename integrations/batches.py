"""Batches of quotes: POST /api/v1/estimates/batch plans up to limits.MAX_BATCH_SCENARIOS
scenarios, in order, each through reports.services.create_estimate (so each one is exactly what
POST /api/v1/estimates makes, work budget included), and stores the batch: the estimate of each
scenario, or its errors with field paths `scenarios.<i>.…`. One bad scenario never spoils the
others. The batch as a whole has a wall-clock budget (limits.BATCH_SECONDS): scenarios not started
when it is spent answer 503 and can be sent again."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from estimator import limits
from estimator.errors import ScenarioError
from reports.models import Estimate
from reports.services import create_estimate
from teams.selectors import team_for

from . import callbacks, events
from .models import Batch, BatchItem

KEYS = ("scenarios", "name", "callback")
MAX_NAME_CHARS = Batch._meta.get_field("name").max_length or 200  # the model's column


@dataclass
class BatchRequest:
    scenarios: list[Any]
    name: str = ""
    callback_url: str | None = None


def parse(data: Any, owner) -> BatchRequest:
    """The request's shape; raises ScenarioError with the field path (the scenarios themselves are
    the estimator's to judge, one by one)."""
    if not isinstance(data, dict):
        raise ScenarioError('the body must be a JSON object {"scenarios": [...]}')
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ScenarioError("unknown key; a batch has scenarios, name and callback", unknown[0])
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        raise ScenarioError("is required: a list of scenarios (at least one)", "scenarios")
    if len(scenarios) > limits.MAX_BATCH_SCENARIOS:
        raise ScenarioError(
            f"has {len(scenarios)} scenarios; the limit is {limits.MAX_BATCH_SCENARIOS} per batch",
            "scenarios",
        )
    name = data.get("name") or ""
    if not isinstance(name, str):
        raise ScenarioError("must be a string", "name")
    if len(name) > MAX_NAME_CHARS:
        raise ScenarioError(f"must be at most {MAX_NAME_CHARS} characters", "name")
    return BatchRequest(
        scenarios=scenarios, name=name, callback_url=callbacks.parse(data.get("callback"), owner)
    )


def prefixed(exc: ScenarioError, index: int) -> list[dict[str, Any]]:
    """The scenario's errors with their field paths inside the batch body."""
    out = []
    for item in exc.to_dict()["errors"]:
        inner = item.get("field") or ""
        out.append({**item, "field": f"scenarios.{index}" + (f".{inner}" if inner else "")})
    return out


def create_batch(
    *,
    data: Any,
    owner,
    base_url: str,
    team: str | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Batch:
    """Parse, plan every scenario, store the batch; its callback (if any) fires when it commits.
    Every estimate goes to the team `team` names (as POST /estimates?team= does), checked once
    before anything is planned."""
    owner = owner if owner is not None and owner.is_authenticated else None
    request = parse(data, owner)
    team_for(owner, team)  # a team the caller is not in refuses the whole batch, field "team"
    started = clock()
    with transaction.atomic():
        batch = Batch.objects.create(owner=owner, name=request.name)
        items = []
        for index, scenario in enumerate(request.scenarios):
            named = scenario.get("name") if isinstance(scenario, dict) else None
            item = BatchItem(
                batch=batch, index=index, status=201, name=named[:200] if isinstance(named, str) else ""
            )
            if clock() - started > limits.BATCH_SECONDS:
                item.status = 503
                item.errors = [
                    {
                        "field": f"scenarios.{index}",
                        "message": f"not planned: the batch used its time budget of {limits.BATCH_SECONDS:g} s; "
                        "send this scenario again",
                    }
                ]
            else:
                try:
                    item.estimate = create_estimate(data=scenario, owner=owner, team=team)
                except ScenarioError as exc:
                    item.status, item.errors = 400, prefixed(exc, index)
            items.append(item)
        BatchItem.objects.bulk_create(items)
        callback = callbacks.attach(request.callback_url, owner, base_url, batch=batch)
        if callback is not None:  # a batch is done when it is answered
            callbacks.fire(callback, "batch.done", events.batch_data(batch, base_url, counts(batch)))
    return batch


def items_of(batch: Batch) -> list[BatchItem]:
    return list(batch.items.select_related("estimate").order_by("index"))


def estimates_of(batch: Batch) -> list[Estimate]:
    """The batch's estimates in the order of its scenarios (those deleted since are left out)."""
    return [item.estimate for item in items_of(batch) if item.estimate is not None]


def counts(batch: Batch) -> dict[str, int]:
    items = items_of(batch)
    planned = sum(1 for item in items if item.estimate is not None)
    return {"count": len(items), "planned": planned, "failed": len(items) - planned}


def owned_batch(user, pk: int) -> Batch:
    """The user's batch `pk`; Batch.DoesNotExist for anyone else's (existence is not disclosed)."""
    if not user or not user.is_authenticated or not 0 < int(pk) < 2**63:
        raise Batch.DoesNotExist
    return Batch.objects.get(pk=pk, owner=user)


def shared_batch(token: str) -> Batch:
    if not token or len(token) > 64:
        raise Batch.DoesNotExist
    return Batch.objects.get(share_token=token)
