"""A client generated from the served OpenAPI document drives the worked example end to end, as
an integrator's would: token, team, price book, batch, retry, list, report, sweep and the webhook's
signature. The generator is openapi-python-client (offline: it reads the document we give it);
every call goes through the generated functions and models, so a document that lies about a
shape fails here (the generated models parse every response strictly)."""

from __future__ import annotations

import datetime as dt
import importlib
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from standardwebhooks import Webhook

from sweeps import services as sweep_services
from sweeps.models import Sweep

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = "clusterplan_client"
VENV_BIN = Path(sys.executable).parent
GENERATOR = str(VENV_BIN / "openapi-python-client")
PLAN = {"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 2e11}, "cluster": {"cards": 64}}
A_PRICES = {"servers": {"dgx-h100": 110_000}, "switches": {"qm9700": 25_000}}


@pytest.fixture
def generated(tmp_path, live_server):
    """The client package, generated from the document the live server serves at /api/v1/schema."""
    out = tmp_path / "client"
    out.mkdir()
    document = out / "openapi.json"
    request = urllib.request.Request(
        f"{live_server.url}/api/v1/schema", headers={"Accept": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as served:
        document.write_bytes(served.read())
    run = subprocess.run(
        [
            GENERATOR,
            "generate",
            "--path",
            str(document),
            "--output-path",
            str(out / PACKAGE),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"},  # its ruff post-hooks
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stdout + run.stderr, run.stdout + run.stderr  # nothing it had to skip
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _api(name: str):
    group, _, operation = name.partition(":")
    return importlib.import_module(f"{PACKAGE}.api.{group}.{operation}")


def _models():
    return importlib.import_module(f"{PACKAGE}.models")


def test_the_worked_example_through_a_generated_client(
    generated, live_server, user, receiver, eager_celery, loopback_targets, monkeypatch
):
    from accounts.services import issue_token

    models = _models()
    _, secret_token = issue_token(user=user, name="generated client")  # what the "API tokens" page shows once
    client = generated.AuthenticatedClient(
        base_url=live_server.url, token=secret_token, raise_on_unexpected_status=True
    )

    # a team, from a fresh install: its creator is its admin
    team = _api("teams:teams_create").sync_detailed(client=client, body=models.TeamInput(name="Procurement"))
    assert team.status_code == 201 and team.parsed.slug == "procurement"
    assert team.headers["Location"] == team.parsed.url

    # a vendor's price book, and the same prices put again: nothing filed
    prices = models.BookInputPriceTable.from_dict(A_PRICES)
    book = _api("price_books:price_books_create").sync_detailed(
        client=client,
        body=models.BookInput(
            team="procurement", name="Vendor A", price_date=dt.date(2026, 11, 20), prices=prices
        ),
    )
    assert book.status_code == 201 and book.parsed.reference == "procurement/vendor-a"
    same = _api("price_books:price_books_update").sync(
        client=client,
        id=book.parsed.id,
        body=models.VersionInput(price_date=dt.date(2026, 11, 20), prices=prices),
    )
    assert same.version_created is False and same.latest.version == 1

    # a batch of two quotes with a callback, and its retry with the same Idempotency-Key
    quotes = [
        {**PLAN, "name": "Vendor A", "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"}}
        | {"cost": {"price_book": "procurement/vendor-a@1"}},
        {**PLAN, "name": "Vendor C", "hardware": {"accelerator": "ascend-910b2"}},
    ]
    with receiver([204]) as hook:  # the callback's target, on 127.0.0.1
        body = models.BatchRequest(scenarios=quotes, name="RFQ 7", callback=models.Callback(url=hook.url))
        create = _api("estimates:estimates_batch_create")
        first = create.sync_detailed(
            client=client, body=body, team="procurement", idempotency_key="rfq-7-generated-client"
        )
        retry = create.sync_detailed(
            client=client, body=body, team="procurement", idempotency_key="rfq-7-generated-client"
        )
    assert first.status_code == retry.status_code == 202  # accepted; planned by the batch task
    assert retry.headers["Idempotent-Replayed"] == "true" and retry.parsed.id == first.parsed.id
    assert first.headers["Location"] == first.parsed.url
    batch = _api("estimates:estimates_batch_retrieve").sync(client=client, id=first.parsed.id)
    assert batch.status == "done"  # the task ran in the server (Celery eager) before it answered
    assert (batch.count, batch.planned, batch.failed) == (2, 2, 0)
    a, c = (item.estimate for item in batch.results)
    assert a.result.compute.cards == c.result.compute.cards == 64  # typed sections, not a dict
    assert a.amounts["cost.capex.total"].currency == "USD"
    assert a.price_book.version == 1

    # the list: paged as served, the newest first, money with its currency
    page = _api("estimates:estimates_list").sync(client=client, page=1, page_size=1)
    assert page.count == 2 and len(page.results) == 1 and page.next_ is not None
    assert page.results[0].headline.capex_amount.currency == "USD"

    # a report through its share token, anonymously, with an ETag
    token = a.report_url.rstrip("/").rsplit("/", 1)[-1]
    anonymous = generated.Client(base_url=live_server.url, raise_on_unexpected_status=True)
    report = _api("reports:reports_retrieve").sync_detailed(client=anonymous, token=token)
    assert report.status_code == 200 and report.parsed.result.cost.capex.total == a.result.cost.capex.total
    assert report.headers["ETag"]

    # a sweep over two card counts (its chunks run here, as a worker would)
    monkeypatch.setattr(sweep_services, "enqueue_chunks", lambda *args, **kwargs: 0)
    base = {**PLAN, "hardware": {"accelerator": "ascend-910b2"}}
    started = _api("sweeps:sweeps_create").sync_detailed(
        client=client, body=models.SweepRequest(base=base, axes={"cluster.cards": [64, 128]})
    )
    assert started.status_code == 202
    sweep = Sweep.objects.get(pk=started.parsed.id)
    for index in range(sweep.chunks_total):
        sweep_services.run_chunk(sweep_id=sweep.pk, index=index, worker="test")
    rows = _api("sweeps:sweeps_results").sync(client=client, id=sweep.pk)
    assert rows.count == 2 and rows.currency == "USD" and "cost.capex.total" in rows.amount_columns

    # the notification the batch sent verifies with the secret the API gives
    secret = _api("webhooks:webhooks_secret").sync(client=client).secret
    (delivered,) = hook.received
    headers = {k.lower(): v for k, v in delivered["headers"].items()}
    event = Webhook(secret).verify(delivered["body"], headers)
    assert event["type"] == "batch.done" and event["data"]["id"] == batch.id
    deliveries = _api("webhooks:webhooks_deliveries").sync(client=client, batch=batch.id)
    assert deliveries.count == 1 and deliveries.results[0].event_id == headers["webhook-id"]
    print(json.dumps({"batch": batch.id, "cards": [a.result.compute.cards, c.result.compute.cards]}))
