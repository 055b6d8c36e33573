"""The OIDC authentication backend (only in AUTHENTICATION_BACKENDS when config/oidc.py
finds OIDC configured): who may sign in and which account they get.

- An account is matched by the provider's email claim, case-insensitively; a disabled account is
  refused, not replaced. The email must be verified by the provider (OIDC_REQUIRE_VERIFIED_EMAIL),
  otherwise anyone able to type an address at the provider could take over the account with it.
- No match: a new account when OIDC_CREATE_USER (from OIDC_CREATE_USERS), with a readable username
  from the `preferred_username` claim or the email's local part; otherwise the sign-in fails.
- The ID token must name this client in its audience (the library does not check it).
"""

from __future__ import annotations

import re
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

USERNAME_CHARS = re.compile(r"[^\w.@+-]")  # what Django's username validator accepts
USERNAME_MAX = 150
NUMBERED_TRIES = 8


class OIDCBackend(OIDCAuthenticationBackend):
    def verify_claims(self, claims) -> bool:
        if not claims.get("email"):
            return False
        return claims.get("email_verified") is True or not getattr(
            settings, "OIDC_REQUIRE_VERIFIED_EMAIL", True
        )

    def filter_users_by_claims(self, claims):
        email = claims.get("email")
        if not email:
            return self.UserModel.objects.none()
        # disabled accounts match too: the library then refuses the sign-in, where leaving them out
        # would create a fresh account for someone the administrator has shut out
        return self.UserModel.objects.filter(email__iexact=email)

    def create_user(self, claims):
        return self.UserModel.objects.create_user(username_for(claims), email=claims["email"])

    def verify_token(self, token, **kwargs):
        payload = super().verify_token(token, **kwargs)
        audience = payload.get("aud")
        if audience is not None:
            audiences = audience if isinstance(audience, list) else [audience]
            if self.OIDC_RP_CLIENT_ID not in audiences:
                raise SuspiciousOperation("the ID token was issued for another client")
        return payload


def username_for(claims) -> str:
    """A free username from `preferred_username`, else the email's local part: "ada", then "ada-2"...; a user's `username` is unique, case aside."""
    wanted = claims.get("preferred_username") or str(claims.get("email", "")).split("@")[0]
    base = USERNAME_CHARS.sub("", str(wanted))[: USERNAME_MAX - 9] or "user"
    taken = get_user_model().objects.filter(username__iexact=base).exists()
    if not taken:
        return base
    for n in range(2, NUMBERED_TRIES + 2):
        candidate = f"{base}-{n}"
        if not get_user_model().objects.filter(username__iexact=candidate).exists():
            return candidate
    return f"{base}-{secrets.token_hex(4)}"  # a crowded name: a random suffix instead of counting on
