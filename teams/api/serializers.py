"""Serializers of the teams API: teams, memberships, and what creating or changing them takes."""

from __future__ import annotations

from rest_framework import serializers

from teams import services

ROLE_HELP = "admin: may add and remove members, change roles, and delete the team's estimates and sweeps"


class TeamSerializer(serializers.Serializer):
    slug = serializers.SlugField(help_text="Use it as `?team=` when creating, and in price-book references.")
    name = serializers.CharField()
    role = serializers.ChoiceField(choices=services.ROLES, help_text=f"Your role. {ROLE_HELP}")
    url = serializers.CharField(help_text="This team: GET /api/v1/teams/{slug}")


class TeamInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    slug = serializers.SlugField(
        max_length=50, required=False, help_text="Default: from the name (unique across the site)."
    )


class MemberSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=services.ROLES, help_text=ROLE_HELP)
    url = serializers.CharField(help_text="This membership: PATCH (role) or DELETE")


class TeamDetailSerializer(TeamSerializer):
    members = MemberSerializer(many=True)


class MemberInputSerializer(serializers.Serializer):
    user = serializers.CharField(max_length=254, help_text="The account's username or email address.")
    role = serializers.ChoiceField(choices=services.ROLES, default="member")


class RoleInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=services.ROLES)
