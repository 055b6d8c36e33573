"""REST API of price books: thin views over pricebooks.services and selectors. A book is visible
to the members of its team only; anyone else gets 404. Errors use the API's one shape."""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from api.conditional import immutable
from api.exceptions import ErrorSerializer
from api.parsers import StrictJSONParser
from api.schema import IF_NONE_MATCH
from estimator.errors import ScenarioError
from pricebooks import selectors, services
from pricebooks.models import PriceBook, PriceBookVersion
from teams.selectors import teams_of

from .serializers import (
    BookInputSerializer,
    PriceBookSerializer,
    PriceBookUpdateSerializer,
    VersionInputSerializer,
    VersionSerializer,
)

ERRORS = {400: ErrorSerializer, 401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer}


def _book(request, pk: int) -> PriceBook:
    try:
        return selectors.visible_book(user=request.user, pk=pk)
    except PriceBook.DoesNotExist:
        raise Http404 from None


def _valid(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _version_fields(request) -> dict:
    data = _valid(VersionInputSerializer, request)
    return {k: data.get(k) for k in ("currency", "price_date", "prices", "name")}


def _absolute(request, name: str, *args) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


def _version_identity(request, pk: int, number: int) -> tuple | None:
    """None unless the caller may see the book (the same rule as the view's)."""
    visible = selectors.books_of(user=request.user).filter(pk=pk)
    found = (
        PriceBookVersion.objects.filter(book__in=visible, number=number)
        .values_list("pk", "created_at")
        .first()
    )
    return None if found is None else ("price-book-version", *found)


class PriceBookListCreateView(APIView):
    """GET: your teams' price books. POST: a new book (its version 1) for one of your teams."""

    permission_classes = [IsAuthenticated]
    parser_classes = [StrictJSONParser]

    @extend_schema(
        operation_id="price_books_list",
        summary="Your teams' price books, each with its latest version",
        responses={200: PriceBookSerializer(many=True), 401: ErrorSerializer},
    )
    def get(self, request):
        books = selectors.books_of(user=request.user)[:500]
        return Response(PriceBookSerializer(books, many=True, context={"request": request}).data)

    @extend_schema(
        operation_id="price_books_create",
        summary="Create a price book",
        description="Prices list only what differs from the catalog (the default book); ids must be catalog "
        "ids. Any member of the team may create and edit its books.",
        request=BookInputSerializer,
        responses={201: PriceBookSerializer, **ERRORS},
    )
    def post(self, request):
        data = _valid(BookInputSerializer, request)
        team = teams_of(user=request.user).filter(slug=data["team"]).first()
        if team is None:
            raise ScenarioError(
                _("you are not a member of a team '%(slug)s'") % {"slug": data["team"][:50]}, "team"
            )
        book = services.create_book(
            user=request.user,
            team=team,
            name=data["name"],
            slug=data.get("slug"),
            currency=data["currency"],
            price_date=data["price_date"],
            prices=data["prices"],
        )
        body = PriceBookSerializer(book, context={"request": request}).data
        location = _absolute(request, "pricebooks_api:detail", book.pk)
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})


class PriceBookDetailView(APIView):
    """GET: one book with its latest version. PUT: edit it, which adds a version (earlier ones never change)."""

    permission_classes = [IsAuthenticated]
    parser_classes = [StrictJSONParser]

    @extend_schema(operation_id="price_books_retrieve", responses={200: PriceBookSerializer, **ERRORS})
    def get(self, request, pk: int):
        return Response(PriceBookSerializer(_book(request, pk), context={"request": request}).data)

    @extend_schema(
        operation_id="price_books_update",
        summary="Edit a price book: a new version, unless nothing changed",
        description="The body is the book's currency, price date and prices (and optionally a new name). "
        "When they differ from the latest version, a new version is filed (`version_created`: true); "
        "the same content again files nothing (`version_created`: false), so a PUT can be repeated "
        "safely. Estimates made with earlier versions keep theirs. `Idempotency-Key` is honoured as "
        "on POST.",
        request=VersionInputSerializer,
        responses={200: PriceBookUpdateSerializer, **ERRORS},
    )
    def put(self, request, pk: int):
        book = _book(request, pk)
        _version, created = services.update_book(user=request.user, book=book, **_version_fields(request))
        book.refresh_from_db()
        body = PriceBookSerializer(book, context={"request": request}).data
        return Response({**body, "version_created": created})


class PriceBookVersionsView(APIView):
    """GET: every version of a book, newest first. POST: a new version."""

    permission_classes = [IsAuthenticated]
    parser_classes = [StrictJSONParser]

    @extend_schema(
        operation_id="price_book_versions_list", responses={200: VersionSerializer(many=True), **ERRORS}
    )
    def get(self, request, pk: int):
        book = _book(request, pk)
        versions = book.versions.select_related("created_by").order_by("-number")[:1000]
        return Response(VersionSerializer(versions, many=True).data)

    @extend_schema(
        operation_id="price_book_versions_create",
        request=VersionInputSerializer,
        responses={201: VersionSerializer, **ERRORS},
    )
    def post(self, request, pk: int):
        book = _book(request, pk)
        version = services.add_version(user=request.user, book=book, **_version_fields(request))
        location = _absolute(request, "pricebooks_api:version", book.pk, version.number)
        return Response(
            VersionSerializer(version).data, status=status.HTTP_201_CREATED, headers={"Location": location}
        )


class PriceBookVersionView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="price_book_versions_retrieve",
        summary="One version of a book (it never changes: ETag, 304 on If-None-Match)",
        parameters=[IF_NONE_MATCH],
        responses={200: VersionSerializer, 304: None, **ERRORS},
    )
    @immutable(_version_identity)
    def get(self, request, pk: int, number: int):
        version = _book(request, pk).versions.filter(number=number).first()
        if version is None:
            raise Http404
        return Response(VersionSerializer(version).data)
