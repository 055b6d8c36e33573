"""The sweep builder shows only the chosen sizing's fields, as the estimate form does (form.js:
the card count for "cards", the deadline and its chance for "deadline"; every field without
JavaScript), so a chance typed under a card-count sizing is not silently left out."""

from __future__ import annotations

import re

import pytest


@pytest.mark.django_db
def test_the_sizing_fields_are_grouped_by_the_sizing_they_belong_to(client):
    html = client.get("/sweeps/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    builder = re.search(r'<form[^>]*id="sweep-builder".*?</form>', html, re.S).group(0)
    cards = re.search(
        r'<div class="when when-cards">(.*?)</div>\s*<div class="when when-deadline">', builder, re.S
    )
    assert cards and 'name="cards"' in cards.group(1) and 'name="target_days"' not in cards.group(1)
    deadline = builder[cards.end() :]
    assert deadline.index('name="target_days"') < deadline.index('name="deadline_confidence"')
    assert deadline.index('name="deadline_confidence"') < deadline.index('name="mfu"')
    assert 'name="budget"' not in (cards.group(1))  # the budget flags rows under every sizing: always shown
    assert re.search(r'<script src="[^"]*js/form\.js"', html)
