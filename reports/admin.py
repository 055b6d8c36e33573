from django.contrib import admin

from .models import Estimate


@admin.register(Estimate)
class EstimateAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "owner", "team", "engine_version", "catalog_version", "created_at")
    list_filter = ("engine_version", "catalog_version", "team")
    search_fields = ("name", "share_token")
    readonly_fields = ("share_token", "created_at", "engine_version", "catalog_version")
    raw_id_fields = ("owner", "price_book_version")
