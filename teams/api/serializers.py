"""Serializers of the teams API."""

from __future__ import annotations

from rest_framework import serializers


class TeamSerializer(serializers.Serializer):
    slug = serializers.SlugField(help_text="Use it as `?team=` when creating, and in price-book references.")
    name = serializers.CharField()
    role = serializers.ChoiceField(
        choices=["member", "admin"], help_text="admin: may delete the team's estimates and sweeps"
    )
