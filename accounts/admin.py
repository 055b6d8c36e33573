from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are issued by their owner (or `manage.py create_api_token`); the admin can only look
    and revoke: there is no secret here to show."""

    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "expires_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("user", "name", "prefix", "created_at", "last_used_at", "expires_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description=_("Revoke the selected tokens"))
    def revoke(self, request, queryset):
        queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
