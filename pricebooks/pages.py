"""Browser pages of price books: your teams' books, a new book, and editing one (a new version).
Signed-in only; a book of another team answers 404. Plain forms, no JavaScript needed."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from estimator.errors import ScenarioError
from teams.selectors import teams_of

from . import selectors, services
from .forms import PriceBookForm
from .models import PriceBook


@login_required
@require_http_methods(["GET", "POST"])
def index(request):
    """Your teams' books, and the form for a new one."""
    teams = list(teams_of(user=request.user))
    form = PriceBookForm(request.POST or None, teams=teams) if teams else None
    status = 200
    if request.method == "POST":
        if form is None:
            raise Http404
        if form.is_valid():
            team = next(t for t in teams if t.slug == form.cleaned_data["team"])
            try:
                book = services.create_book(user=request.user, team=team, **form.version_fields())
            except ScenarioError as exc:
                form.add_core_errors(exc)
            else:
                messages.info(request, _("Price book created: %(ref)s v1.") % {"ref": book.reference})
                return redirect("pricebooks_pages:edit", pk=book.pk)
        status = 400
    books = selectors.books_of(user=request.user).prefetch_related("versions")
    return render(
        request, "pricebooks/index.html", {"books": books, "form": form, "teams": teams}, status=status
    )


@login_required
@require_http_methods(["GET", "POST"])
def edit(request, pk: int):
    """One book: its versions, and the table of the latest prices; saving adds a version."""
    try:
        book = selectors.visible_book(user=request.user, pk=pk)
    except PriceBook.DoesNotExist:
        raise Http404 from None
    latest = book.latest()
    status = 200
    if request.method == "POST":
        form = PriceBookForm(request.POST)
        if form.is_valid():
            try:
                version = services.add_version(user=request.user, book=book, **form.version_fields())
            except ScenarioError as exc:
                form.add_core_errors(exc)
            else:
                messages.info(request, _("Saved as version %(n)s.") % {"n": version.number})
                return redirect("pricebooks_pages:edit", pk=book.pk)
        status = 400
    else:
        form = PriceBookForm(initial=PriceBookForm.initial_from(latest) if latest else {"name": book.name})
    versions = book.versions.select_related("created_by").order_by("-number")
    return render(
        request,
        "pricebooks/edit.html",
        {"book": book, "latest": latest, "versions": versions, "form": form},
        status=status,
    )
