"""Schemathesis against the OpenAPI schema (/api/v1/schema), in process through the WSGI app: every
operation with generated bodies, parameters and headers (valid and invalid), anonymous and with a
token, then a stateful run over the links schemathesis infers from the schema. The checks: no
server error (5xx), and the document tells the truth: every status code, content type, header and
body as served is the one it describes (CHECKS). Bounded for CI: EXAMPLES per operation, no
deadline (a shared 2-core box). Each run counts its cases (CASES), printed at the session's end."""

import contextlib
import json

import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

EXAMPLES = 10  # x ~50 operations x 2 callers: a minute or two on a 2-core box
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
CASES = {"stateless": 0, "stateful": 0}
BOUNDED = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


class _App:
    """The Django app over https (production settings redirect plain http), built on first use."""

    handler = None

    def __call__(self, environ, start_response):
        if self.handler is None:
            self.handler = WSGIHandler()
        return self.handler({**environ, "wsgi.url_scheme": "https"}, start_response)


def _load():
    # The document /api/v1/schema serves, generated here: schemathesis's lazy pytest loader does
    # not run on pytest 9, and this needs neither a request nor the database.
    raw = OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True))
    loaded = schemathesis.openapi.from_dict(json.loads(raw))
    loaded.app = _App()
    # the coverage phase (hundreds of boundary cases per operation) does not fit the budget of a
    # shared box; examples and fuzzing (valid and invalid data) do, bounded by EXAMPLES
    loaded.config.phases.update(phases=["examples", "fuzzing", "stateful"])
    return loaded


schema = _load()


@pytest.fixture(autouse=True)
def _in_test_transaction(settings):
    """Like Django's test client: the app's request signals must not close the test's connection;
    and rates high enough that throttling does not hide the handlers from the fuzzer."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    rates = dict.fromkeys(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "100000/minute")
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}):
        yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture(scope="module", autouse=True)
def _report_case_counts(request):
    """The number of cases each run checked, printed at the end (past pytest's output capture)."""
    yield
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\nschemathesis cases checked: {CASES}", flush=True)


@pytest.fixture
def token(user):
    from accounts.services import issue_token

    return issue_token(user=user, name="fuzz")[1]


@schema.parametrize()
@BOUNDED
def test_conformance_anonymous(case):
    CASES["stateless"] += 1
    case.call_and_validate(checks=CHECKS)


@schema.parametrize()
@BOUNDED
def test_conformance_with_a_token(case, token):
    CASES["stateless"] += 1
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)


def test_stateful_conformance(token):
    """Sequences of calls over the links schemathesis infers (POST /estimates -> GET/DELETE
    /estimates/{id}, /reports/{token}, ...), each call checked like the stateless ones."""
    machine = schema.as_state_machine()

    class Machine(machine):
        def get_call_kwargs(self, case):
            return {"headers": {"Authorization": f"Token {token}"}}

        def validate_response(self, response, case, **kwargs):
            CASES["stateful"] += 1
            case.validate_response(response, checks=CHECKS)

    Machine.run(
        settings=settings(
            max_examples=6,
            stateful_step_count=5,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
    )
