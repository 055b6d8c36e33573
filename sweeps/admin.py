from django.contrib import admin

from .models import Sweep, SweepChunk


@admin.register(Sweep)
class SweepAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "owner", "status", "done", "total", "requeues", "created_at", "finished_at")
    list_filter = ("status", "engine_version")
    search_fields = ("name", "share_token")
    readonly_fields = (
        "share_token",
        "created_at",
        "started_at",
        "finished_at",
        "progress_at",
        "requeued_at",
        "engine_version",
        "catalog_version",
        "done",
        "chunks_done",
        "compute_s",
    )
    exclude = ("summary",)


@admin.register(SweepChunk)
class SweepChunkAdmin(admin.ModelAdmin):
    list_display = ("sweep", "index", "start", "stop", "compute_s", "worker", "created_at")
    exclude = ("data", "digest")
    readonly_fields = ("sweep", "index", "start", "stop", "compute_s", "worker", "created_at")
