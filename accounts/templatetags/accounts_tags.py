"""{% oidc_sign_in %}: the "Sign in with <provider>" button, present only when OIDC is configured."""

from __future__ import annotations

from django import template
from django.conf import settings

register = template.Library()


@register.inclusion_tag("accounts/_oidc_sign_in.html", takes_context=True)
def oidc_sign_in(context) -> dict[str, object]:
    request = context.get("request")
    return {
        "enabled": settings.OIDC_ENABLED,
        "provider": getattr(settings, "OIDC_PROVIDER_NAME", ""),
        "next": context.get("next", ""),
        # the library sends a failed sign-in back to the login page with ?oidc=failed
        "failed": request is not None and request.GET.get("oidc") == "failed",
    }
