"""Sign-in through an OpenID Connect provider (mozilla-django-oidc), read from the environment.

Off unless OIDC_RP_CLIENT_ID is set; then the provider's endpoints must be set too, and a partial
set-up (some OIDC_RP_* / OIDC_OP_* without the rest) stops the start with the names that are
missing, rather than running with sign-in silently off. Imported by config/settings.py, so it
imports nothing of Django's models; the backend itself is accounts.oidc.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float

BACKEND = "accounts.oidc.OIDCBackend"  # appended to AUTHENTICATION_BACKENDS when this is on
REQUIRED = (
    "OIDC_RP_CLIENT_ID",
    "OIDC_RP_CLIENT_SECRET",
    "OIDC_OP_AUTHORIZATION_ENDPOINT",
    "OIDC_OP_TOKEN_ENDPOINT",
    "OIDC_OP_USER_ENDPOINT",
)


def oidc_settings(env: Mapping[str, str]) -> dict[str, object]:
    """The Django settings that turn OIDC sign-in on, or {} when it is not configured."""
    given = {k: v.strip() for k, v in env.items() if k.startswith("OIDC_") and v.strip()}
    if "OIDC_RP_CLIENT_ID" not in given:
        stray = sorted(k for k in given if k.startswith(("OIDC_RP_", "OIDC_OP_")))
        if stray:
            raise ImproperlyConfigured(f"OIDC sign-in needs OIDC_RP_CLIENT_ID too (set: {', '.join(stray)})")
        return {}
    algo = given.get("OIDC_RP_SIGN_ALGO", "RS256")
    # an asymmetric signature is checked with the provider's published keys
    required = REQUIRED + (("OIDC_OP_JWKS_ENDPOINT",) if algo.startswith(("RS", "ES")) else ())
    missing = [k for k in required if k not in given]
    if missing:
        raise ImproperlyConfigured(f"OIDC sign-in is half configured; set {', '.join(missing)}")
    return {
        **{k: given[k] for k in required},
        "OIDC_RP_SIGN_ALGO": algo,
        "OIDC_RP_SCOPES": given.get("OIDC_RP_SCOPES", "openid email profile"),
        "OIDC_USE_PKCE": True,
        # seconds; the library waits forever by default
        "OIDC_TIMEOUT": env_float("OIDC_TIMEOUT", 10, minimum=0.1, maximum=120, env=given),
        # new people get an account on first sign-in; false: only existing accounts, matched by email
        "OIDC_CREATE_USER": env_bool("OIDC_CREATE_USERS", True, env=given),
        # matching by email is safe only for an address the provider has verified
        "OIDC_REQUIRE_VERIFIED_EMAIL": env_bool("OIDC_REQUIRE_VERIFIED_EMAIL", True, env=given),
        "OIDC_PROVIDER_NAME": given.get("OIDC_PROVIDER_NAME", "OpenID Connect"),
        "LOGIN_REDIRECT_URL": "reports:mine",
        "LOGIN_REDIRECT_URL_FAILURE": "/accounts/login/?oidc=failed",  # the login page says it failed
    }
