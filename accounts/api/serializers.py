"""API output of a token: what the owner may see of it (never the secret or its digest)."""

from __future__ import annotations

from rest_framework import serializers

from accounts.models import ApiToken


class ApiTokenSerializer(serializers.ModelSerializer):
    active = serializers.SerializerMethodField(help_text="Not revoked and not expired: it authenticates.")
    current = serializers.SerializerMethodField(
        help_text="The token this request carries (so a script can find, and revoke, its own)."
    )

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "prefix",
            "created_at",
            "last_used_at",
            "expires_at",
            "revoked_at",
            "active",
            "current",
        ]
        read_only_fields = fields
        extra_kwargs = {"prefix": {"help_text": "The token's first characters, to recognise it by."}}

    def get_active(self, token: ApiToken) -> bool:
        return token.is_active()

    def get_current(self, token: ApiToken) -> bool:
        carried = getattr(self.context.get("request"), "auth", None)
        return isinstance(carried, ApiToken) and carried.pk == token.pk
