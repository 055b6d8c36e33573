"""REST API of teams: the teams you belong to (GET /api/v1/teams)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from api.exceptions import ErrorSerializer
from teams.selectors import memberships_of

from .serializers import TeamSerializer


class TeamListView(APIView):
    """Your teams. Their members see each other's estimates, sweeps and price books; other users get 404."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="teams_list",
        summary="Your teams and your role in each",
        responses={200: TeamSerializer(many=True), 401: ErrorSerializer},
    )
    def get(self, request):
        rows = [
            {"slug": m.team.slug, "name": m.team.name, "role": m.role} for m in memberships_of(request.user)
        ]
        return Response(TeamSerializer(rows, many=True).data)
