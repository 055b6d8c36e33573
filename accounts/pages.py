"""The "API tokens" page: a signed-in user lists, creates and revokes their own tokens."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from . import selectors, services
from .forms import TokenForm
from .models import ApiToken

MAX_LISTED = 200


def _page(
    request, form: TokenForm, created: ApiToken | None = None, secret: str = "", status: int = 200
) -> HttpResponse:
    context = {
        "form": form,
        "tokens": selectors.tokens_of(user=request.user)[:MAX_LISTED],
        "created": created,
        "secret": secret,
    }
    response = render(request, "accounts/tokens.html", context, status=status)
    if secret:
        response["Cache-Control"] = "no-store"  # the one page that shows the secret is never kept
    return response


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    if request.method != "POST":
        return _page(request, TokenForm())
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        token, secret = services.issue_token(
            user=request.user, name=form.cleaned_data["name"], expires_at=form.expires_at()
        )
    except ValidationError as exc:
        form.add_error(None, exc)
        return _page(request, form, status=400)
    # answered here, not after a redirect, so the secret never sits in a session or a cookie
    return _page(request, TokenForm(), created=token, secret=secret, status=201)


@login_required
@require_POST
def revoke(request, pk: int):
    try:
        token = selectors.owned_token(user=request.user, pk=pk)
    except ApiToken.DoesNotExist:
        raise Http404 from None
    services.revoke_token(token=token)
    messages.success(request, _("Token “%(name)s” revoked; it no longer works.") % {"name": token.name})
    return redirect("accounts:tokens")
