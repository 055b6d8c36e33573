"""REST API of teams: your teams (GET), a new one (POST, you become its admin), one team with its
members, and its memberships: an admin adds a member by username or email, changes a role,
removes a member. A team you are not in answers 404; a member who is not an admin gets 403."""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from api.exceptions import ErrorSerializer
from api.parsers import StrictJSONParser
from teams import services
from teams.models import Membership, Team
from teams.selectors import members_of, membership_in, memberships_of, team_of

from .serializers import (
    MemberInputSerializer,
    MemberSerializer,
    RoleInputSerializer,
    TeamDetailSerializer,
    TeamInputSerializer,
    TeamSerializer,
)

ERRORS = {400: ErrorSerializer, 401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer}
FORBIDDEN = {403: ErrorSerializer}


def _url(request, name: str, *args) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


def _team_row(request, team: Team, role: str) -> dict:
    return {
        "slug": team.slug,
        "name": team.name,
        "role": role,
        "url": _url(request, "teams_api:detail", team.slug),
    }


def _member_row(request, m: Membership) -> dict:
    username = m.user.get_username()
    return {
        "username": username,
        "role": m.role,
        "url": _url(request, "teams_api:member", m.team.slug, username),
    }


def _valid(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _team(request, slug: str) -> Team:
    try:
        return team_of(user=request.user, slug=slug)
    except Team.DoesNotExist:
        raise Http404 from None


def _admin_only(call):
    try:
        return call()
    except services.NotAdminError as exc:
        raise PermissionDenied(str(exc)) from None


class TeamListView(APIView):
    """Your teams. Their members see each other's estimates, sweeps and price books; other users get 404."""

    permission_classes = [IsAuthenticated]
    parser_classes = [StrictJSONParser]

    @extend_schema(
        operation_id="teams_list",
        summary="Your teams and your role in each",
        responses={200: TeamSerializer(many=True), 401: ErrorSerializer},
    )
    def get(self, request):
        rows = [_team_row(request, m.team, m.role) for m in memberships_of(user=request.user)]
        return Response(TeamSerializer(rows, many=True).data)

    @extend_schema(
        operation_id="teams_create",
        summary="Create a team (you become its admin)",
        request=TeamInputSerializer,
        responses={201: TeamDetailSerializer, **ERRORS},
    )
    def post(self, request):
        data = _valid(TeamInputSerializer, request)
        team = services.create_team(user=request.user, name=data["name"], slug=data.get("slug"))
        body = {
            **_team_row(request, team, "admin"),
            "members": [_member_row(request, m) for m in members_of(team=team)],
        }
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})


class TeamDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="teams_retrieve", responses={200: TeamDetailSerializer, **ERRORS})
    def get(self, request, slug: str):
        team = _team(request, slug)
        members = list(members_of(team=team))
        role = next(m.role for m in members if m.user_id == request.user.pk)
        return Response(
            {**_team_row(request, team, role), "members": [_member_row(request, m) for m in members]}
        )


class MemberListView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [StrictJSONParser]

    @extend_schema(operation_id="team_members_list", responses={200: MemberSerializer(many=True), **ERRORS})
    def get(self, request, slug: str):
        return Response([_member_row(request, m) for m in members_of(team=_team(request, slug))])

    @extend_schema(
        operation_id="team_members_create",
        summary="Add a member by username or email (admins only)",
        request=MemberInputSerializer,
        responses={201: MemberSerializer, **ERRORS, **FORBIDDEN},
    )
    def post(self, request, slug: str):
        team = _team(request, slug)
        data = _valid(MemberInputSerializer, request)
        membership = _admin_only(
            lambda: services.add_member(by=request.user, team=team, who=data["user"], role=data["role"])
        )
        body = _member_row(request, membership)
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})


class MemberDetailView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [StrictJSONParser]

    def _get(self, request, slug: str, username: str) -> Membership:
        try:
            return membership_in(team=_team(request, slug), username=username)
        except Membership.DoesNotExist:
            raise Http404 from None

    @extend_schema(operation_id="team_members_retrieve", responses={200: MemberSerializer, **ERRORS})
    def get(self, request, slug: str, username: str):
        return Response(_member_row(request, self._get(request, slug, username)))

    @extend_schema(
        operation_id="team_members_update",
        summary="Change a member's role (admins only; a team keeps at least one admin)",
        request=RoleInputSerializer,
        responses={200: MemberSerializer, **ERRORS, **FORBIDDEN},
    )
    def patch(self, request, slug: str, username: str):
        membership = self._get(request, slug, username)
        role = _valid(RoleInputSerializer, request)["role"]
        _admin_only(lambda: services.set_role(by=request.user, membership=membership, role=role))
        return Response(_member_row(request, membership))

    @extend_schema(
        operation_id="team_members_destroy",
        summary="Remove a member (admins only; a team keeps at least one admin)",
        responses={204: None, **ERRORS, **FORBIDDEN},
    )
    def delete(self, request, slug: str, username: str):
        membership = self._get(request, slug, username)
        _admin_only(lambda: services.remove_member(by=request.user, membership=membership))
        return Response(status=status.HTTP_204_NO_CONTENT)
