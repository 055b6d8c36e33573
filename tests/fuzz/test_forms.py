"""Hypothesis fuzz of the page forms (the new-estimate form, the new-sweep form, sign-in and the
language switch): any posted values, plausible or hostile, get a page (200/302/400/413/429),
never a server error. Field names come from the forms themselves, so new fields are fuzzed too."""

import json

import pytest
from django import forms as djforms
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
OK = {200, 302, 400, 413, 429}

# Text a browser can post: any character but lone surrogates (not encodable in a form body).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
NUMBER_TEXT = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e400", "-0", "5e-324", "nan", "inf", "1,000", "2万", "1e12", "0x10", " 7 ", ""]),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
JSON_TEXT = st.one_of(JSON_VALUES.map(json.dumps), TEXT, st.just("[" * 200 + "]" * 200))


@pytest.fixture(autouse=True)
def _open_limits(settings, monkeypatch):
    from sweeps import services

    rates = dict.fromkeys(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "100000/minute")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    settings.SECURE_SSL_REDIRECT = False
    settings.AXES_ENABLED = False  # sign-in is fuzzed for crashes here; the lockout has its own test
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)  # no broker needed


def _field_strategy(field) -> st.SearchStrategy:
    if isinstance(field, djforms.ChoiceField):
        return st.one_of(st.sampled_from([str(c[0]) for c in field.choices] or [""]), TEXT)
    if isinstance(field, djforms.FloatField | djforms.IntegerField | djforms.DecimalField):
        return NUMBER_TEXT
    if field.__class__.__name__ == "QuantityField":
        return st.one_of(NUMBER_TEXT, TEXT)
    return st.one_of(TEXT, JSON_TEXT)


def estimate_form_data() -> st.SearchStrategy:
    from reports.forms import EstimateForm

    form = EstimateForm()
    fuzzed = st.fixed_dictionaries(
        {}, optional={name: _field_strategy(field) for name, field in form.fields.items()}
    )
    # a valid plan with some fields replaced, so the estimator itself is reached, or pure noise
    return st.one_of(st.builds(lambda over: {**VALID_FORM, **over}, fuzzed), fuzzed)


VALID_FORM = {
    "name": "fuzz",
    "model_source": "preset",
    "preset": "llama-3.1-8b",
    "accelerator": "ascend-910b2",
    "tokens": "2e11",
    "sizing": "cards",
    "cards": "64",
    "currency": "USD",
}


def test_the_valid_form_plans():
    assert Client().post("/", VALID_FORM).status_code == 302


@given(data=estimate_form_data())
@FUZZ
def test_estimate_form_never_fails(data):
    r = Client().post("/", data)
    assert r.status_code in OK, (r.status_code, data)


@given(
    name=TEXT,
    base=st.one_of(
        JSON_TEXT, st.just(json.dumps({"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e11}}))
    ),
    axes=JSON_TEXT,
)
@FUZZ
def test_sweep_form_never_fails(name, base, axes):
    r = Client().post("/sweeps/", {"name": name, "base": base, "axes": axes})
    assert r.status_code in OK, (r.status_code, name, base, axes)


@given(username=TEXT, password=TEXT, language=TEXT, nxt=TEXT)
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_sign_in_and_language_switch_never_fail(username, password, language, nxt):
    client = Client()
    r = client.post("/accounts/login/", {"username": username, "password": password, "next": nxt})
    assert r.status_code in OK
    r = client.post("/i18n/setlang/", {"language": language, "next": nxt})
    assert r.status_code in OK
    if r.status_code == 302:
        assert not r["Location"].startswith("//") and "://" not in r["Location"]  # never off-site
