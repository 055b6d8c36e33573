"""`{{ fragment|csp_nonce:request }}`: the response's CSP nonce on every <script> of an HTML fragment
the server generated itself (Plotly's `to_html`), so the Content-Security-Policy lets it run.
Never use it on text a user wrote."""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()

_SCRIPT = re.compile(r"<script(?=[\s>])", re.IGNORECASE)


@register.filter
def csp_nonce(fragment: str, request) -> str:
    nonce = getattr(request, "csp_nonce", None)  # django-csp's lazy nonce: falsy until read
    if nonce is None:
        return mark_safe(fragment)  # noqa: S308 - a server-made fragment, marked safe as before
    return mark_safe(_SCRIPT.sub(f'<script nonce="{escape(str(nonce))}"', fragment))  # noqa: S308
