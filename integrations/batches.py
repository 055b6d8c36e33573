"""Batches of quotes: POST /api/v1/estimates/batch takes up to limits.MAX_BATCH_SCENARIOS
scenarios and answers at once (202) with the batch's status URL; Celery workers on the "batches"
queue plan them (integrations.batch_work), in order, each through reports.services.create_estimate
(so each one is exactly what POST /api/v1/estimates makes, work budget included), filling the
items as they finish: the estimate of each scenario, or its errors with field paths
`scenarios.<i>.…`. One bad scenario never spoils the others; every item ends planned or with its
reason. The web tier never plans a batch, so batch traffic does not take the request threads that
single estimates need; each caller has at most BATCH_MAX_ACTIVE_PER_USER batches queued or running
(BATCH_MAX_ACTIVE_ANON per client address without an account)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from estimator import limits
from estimator.errors import ScenarioError
from reports.models import Estimate
from teams.selectors import team_for

from . import callbacks
from .models import Batch, BatchItem

RUN_BATCH_TASK = "integrations.run_batch"  # registered by integrations.tasks
PENDING = 202  # an item not planned yet

log = logging.getLogger(__name__)


class BatchesBusyError(Exception):
    """The caller already has as many batches queued or running as allowed (answered 429)."""

    def __init__(self, limit: int):
        super().__init__(
            f"you have {limit} batch(es) queued or running; wait for one to finish (GET its url)"
        )
        self.limit = limit


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
    *, data: Any, owner, base_url: str, team: str | None = None, client_ip: str | None = None
) -> Batch:
    """Parse and store the batch with one waiting item per scenario; its planning is queued when
    the transaction commits. Every estimate goes to the team `team` names (as POST
    /estimates?team= does), checked once here. Raises ScenarioError (field paths) and
    BatchesBusyError (the concurrency cap)."""
    owner = owner if owner is not None and owner.is_authenticated else None
    request = parse(data, owner)
    team_for(user=owner, slug=team)  # a team the caller is not in refuses the whole batch, field "team"
    with transaction.atomic():
        _check_active(owner, client_ip)
        batch = Batch.objects.create(
            owner=owner,
            name=request.name,
            status=Batch.Status.QUEUED,
            scenarios=request.scenarios,
            team_choice=team,
            client_ip=client_ip if owner is None else None,
            progress_at=timezone.now(),
        )
        BatchItem.objects.bulk_create(
            BatchItem(batch=batch, index=index, status=PENDING, name=_name_of(scenario))
            for index, scenario in enumerate(request.scenarios)
        )
        callbacks.attach(request.callback_url, owner, base_url, batch=batch)
        batch_id = batch.pk
        transaction.on_commit(lambda: enqueue(batch_id))
    return batch


def _name_of(scenario: Any) -> str:
    named = scenario.get("name") if isinstance(scenario, dict) else None
    return named[:200] if isinstance(named, str) else ""


def _check_active(owner, client_ip: str | None) -> None:
    """The concurrency cap: per user, or per client address without an account."""
    active = Batch.objects.filter(status__in=Batch.ACTIVE)
    if owner is not None:
        active, limit = active.filter(owner=owner), int(settings.BATCH_MAX_ACTIVE_PER_USER)
    else:
        active, limit = active.filter(owner=None, client_ip=client_ip), int(settings.BATCH_MAX_ACTIVE_ANON)
    if active.count() >= limit:
        raise BatchesBusyError(limit)


def enqueue(batch_id: int) -> bool:
    """Publish the batch's task to the "batches" queue. A broker that cannot be reached loses
    nothing: the batch stays queued and the workers' recovery loop queues it again."""
    try:
        current_app.tasks[RUN_BATCH_TASK].apply_async(
            (batch_id,),
            retry=True,
            retry_policy={"max_retries": 1, "interval_start": 0.2, "interval_step": 0.5},
        )
    except Exception as exc:  # kombu raises OperationalError and friends when the broker is down
        log.warning("batch %s: queuing failed: %s", batch_id, exc)
        return False
    return True


def items_of(batch: Batch) -> list[BatchItem]:
    return list(batch.items.select_related("estimate").order_by("index"))


def estimates_of(batch: Batch) -> list[Estimate]:
    """The batch's estimates in the order of its scenarios (those deleted since are left out)."""
    return [item.estimate for item in items_of(batch) if item.estimate is not None]


def counts(batch: Batch) -> dict[str, int]:
    """How many items, planned, refused (or deleted since) and still waiting."""
    items = items_of(batch)
    planned = sum(1 for item in items if item.estimate is not None)
    pending = sum(1 for item in items if item.status == PENDING)
    return {
        "count": len(items),
        "planned": planned,
        "failed": len(items) - planned - pending,
        "pending": pending,
    }


def owned_batch(user, pk: int) -> Batch:
    """The user's batch `pk`; Batch.DoesNotExist for anyone else's (existence is not disclosed)."""
    if not user or not user.is_authenticated or not 0 < int(pk) < 2**63:
        raise Batch.DoesNotExist
    return Batch.objects.get(pk=pk, owner=user)


def shared_batch(token: str) -> Batch:
    if not token or len(token) > 64:
        raise Batch.DoesNotExist
    return Batch.objects.get(share_token=token)
