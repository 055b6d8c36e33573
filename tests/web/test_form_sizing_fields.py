"""A sizing field the reader filled in but that its own check refused says that, once: not also
"give a deadline" as though it were empty (reports.forms.EstimateForm.clean)."""

from __future__ import annotations

import pytest
from django.utils import translation

from reports.forms import EstimateForm
from tests.web.test_deadline_confidence import DEADLINE_FORM


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"target_days": "0"}, "target_days"),
        ({"sizing": "cards", "cards": "0"}, "cards"),
        ({"sizing": "budget", "budget": "0"}, "budget"),
    ],
)
def test_a_refused_sizing_value_has_one_error(change, field):
    with translation.override("en"):
        form = EstimateForm(data={**DEADLINE_FORM, **change})
        assert not form.is_valid()
        (error,) = form.errors[field]
    assert not error.startswith("Give "), error


@pytest.mark.django_db
def test_an_empty_sizing_field_is_still_asked_for():
    with translation.override("en"):
        form = EstimateForm(data={**DEADLINE_FORM, "target_days": ""})
        assert not form.is_valid()
        assert form.errors["target_days"] == ["Give a deadline in days."]
