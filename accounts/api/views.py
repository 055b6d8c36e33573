"""REST API of a user's own tokens: list them and revoke one (a script can retire a token it
suspects leaked). Tokens are created in the browser, where the secret is shown once to a person,
so a leaked token cannot mint others."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors, services
from accounts.models import ApiToken
from api.exceptions import ErrorSerializer
from api.pagination import Pagination
from api.schema import PAGE_PARAMETERS, paginated

from .serializers import ApiTokenSerializer


class TokenListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="tokens_list",
        summary="Your API tokens, newest first",
        description="Live, expired and revoked; never the secret, which is shown once when the token is "
        "created on the “API tokens” page.",
        parameters=PAGE_PARAMETERS,
        responses={
            200: paginated("PaginatedApiTokenList", ApiTokenSerializer),
            401: ErrorSerializer,
            404: ErrorSerializer,
            429: ErrorSerializer,
        },
    )
    def get(self, request):
        paginator = Pagination()
        page = paginator.paginate_queryset(selectors.tokens_of(user=request.user), request, view=self)
        return paginator.get_paginated_response(
            ApiTokenSerializer(page, many=True, context={"request": request}).data
        )


class TokenDetailView(APIView):
    """One of your tokens. Someone else's answers 404, as if it did not exist."""

    permission_classes = [IsAuthenticated]

    def _get(self, request, pk: int) -> ApiToken:
        try:
            return selectors.owned_token(user=request.user, pk=pk)
        except ApiToken.DoesNotExist:
            raise Http404 from None

    @extend_schema(
        operation_id="tokens_retrieve",
        responses={200: ApiTokenSerializer, 401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk: int):
        return Response(ApiTokenSerializer(self._get(request, pk), context={"request": request}).data)

    @extend_schema(
        operation_id="tokens_revoke",
        summary="Revoke a token",
        description="The token stops authenticating at once (the request that revokes the token it "
        "carries still completes). Revoking a revoked token changes nothing.",
        responses={204: None, 401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def delete(self, request, pk: int):
        services.revoke_token(token=self._get(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
