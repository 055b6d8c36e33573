"""`manage.py create_api_token USERNAME --name NAME [--days N]`: a named token for a script, printed
once (the replacement of DRF's drf_create_token; users can also make their own on the web page)."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from accounts import services


class Command(BaseCommand):
    help = "Create a named API token for a user and print it (it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="script", help="what the token is for")
        parser.add_argument(
            "--days", type=int, default=None, help="expires after this many days (default: never)"
        )

    def handle(self, *args, **options):
        try:
            user = get_user_model().objects.get_by_natural_key(options["username"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user {options['username']!r}") from None
        days = options["days"]
        if days is not None and days < 1:
            raise CommandError("--days must be at least 1")
        expires_at = timezone.now() + dt.timedelta(days=days) if days else None
        try:
            _, secret = services.issue_token(user=user, name=options["name"], expires_at=expires_at)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        self.stdout.write(secret)
