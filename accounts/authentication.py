"""DRF authentication by named API token: `Authorization: Bearer <token>` (RFC 6750) or
`Authorization: Token <token>` (the scheme of the DRF tokens this replaced, so scripts keep working).

A request without such a header is left to the next class (the session); a header that names one
of these schemes but does not carry a live token answers 401 in the API's one error shape."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from . import services

SCHEMES = ("bearer", "token")

MESSAGES = {
    "malformed": _("Malformed Authorization header: expected “Bearer <token>” or “Token <token>”."),
    "unknown": _("Invalid token."),
    "revoked": _("This token has been revoked."),
    "expired": _("This token has expired."),
    "inactive": _("The account of this token is disabled."),
}


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() not in {s.encode() for s in SCHEMES}:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(MESSAGES["malformed"])
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(MESSAGES["unknown"]) from None
        try:
            token = services.check_token(secret=secret)
        except services.InvalidTokenError as exc:
            raise exceptions.AuthenticationFailed(MESSAGES[exc.reason]) from None
        return token.user, token

    def authenticate_header(self, request) -> str:
        # "Token" first: clients of the former DRF tokens read the first challenge
        return 'Token realm="api", Bearer realm="api"'
