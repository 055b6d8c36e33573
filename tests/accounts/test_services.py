"""Issuing tokens: the cap per user and the names that tell live tokens apart."""

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings
from django.utils import timezone

from accounts.services import issue_token, revoke_token

pytestmark = pytest.mark.django_db


@override_settings(API_TOKENS_MAX_PER_USER=2)
def test_the_cap_counts_live_tokens_only(user, other_user):
    first, _ = issue_token(user=user, name="a")
    issue_token(user=user, name="b")
    with pytest.raises(ValidationError) as refused:
        issue_token(user=user, name="c")
    assert refused.value.code == "limit"
    assert refused.value.messages == [
        "You already have the most active tokens allowed (2). Revoke one you no longer use."
    ]
    issue_token(user=other_user, name="c")  # the cap is per user
    revoke_token(token=first)
    issue_token(user=user, name="c")  # a revoked token no longer counts
    with pytest.raises(ValidationError):
        issue_token(user=user, name="d")


@override_settings(API_TOKENS_MAX_PER_USER=1)
def test_an_expired_token_does_not_count(user):
    issue_token(user=user, name="old", expires_at=timezone.now() - dt.timedelta(days=1))
    issue_token(user=user, name="new")


def test_a_live_name_cannot_be_reused_until_revoked(user, other_user):
    token, _ = issue_token(user=user, name="quoting")
    with pytest.raises(ValidationError) as refused:
        issue_token(user=user, name=" quoting ")
    assert refused.value.message_dict == {
        "name": ["You already have a token named “quoting”; revoke it or choose another name."]
    }
    issue_token(user=other_user, name="quoting")
    revoke_token(token=token)
    issue_token(user=user, name="quoting")


def test_revoking_twice_keeps_the_first_time(user):
    token, _ = issue_token(user=user, name="a")
    first = revoke_token(token=token).revoked_at
    again = revoke_token(token=token.__class__.objects.get(pk=token.pk)).revoked_at
    assert first is not None and again == first


def test_management_command_prints_a_working_token(user):
    from io import StringIO

    from django.core.management import call_command

    from accounts.services import check_token

    out = StringIO()
    call_command("create_api_token", "alice", "--name", "nightly quotes", "--days", "7", stdout=out)
    token = check_token(secret=out.getvalue().strip())
    assert token.user == user and token.name == "nightly quotes"
    assert dt.timedelta(days=6, hours=23) < token.expires_at - timezone.now() <= dt.timedelta(days=7)
