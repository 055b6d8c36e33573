from django.contrib import admin

from .models import Batch, Callback, DeliveryAttempt


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "owner", "created_at")
    search_fields = ("name", "share_token")
    readonly_fields = ("share_token", "created_at")


class DeliveryAttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    readonly_fields = ("attempt", "started_at", "duration_ms", "status_code", "error", "response_excerpt")


@admin.register(Callback)
class CallbackAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "event_type", "url", "status", "attempts", "fired_at")
    list_filter = ("status", "event_type")
    readonly_fields = (
        "event_id",
        "event_type",
        "payload",
        "attempts",
        "fired_at",
        "next_attempt_at",
        "created_at",
    )
    inlines = [DeliveryAttemptInline]
