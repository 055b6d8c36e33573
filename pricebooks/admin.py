from django.contrib import admin

from .models import PriceBook, PriceBookVersion


class VersionInline(admin.TabularInline):
    """Versions are read-only here: a change is a new version (the 'add' form below)."""

    model = PriceBookVersion
    extra = 0
    can_delete = False
    fields = ("number", "currency", "price_date", "prices", "created_by", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PriceBook)
class PriceBookAdmin(admin.ModelAdmin):
    list_display = ("name", "team", "slug", "created_at")
    list_filter = ("team",)
    search_fields = ("name", "slug")
    inlines = [VersionInline]


@admin.register(PriceBookVersion)
class PriceBookVersionAdmin(admin.ModelAdmin):
    """New versions can be added; saved ones are shown read-only (they never change)."""

    list_display = ("book", "number", "currency", "price_date", "created_by", "created_at")
    list_filter = ("currency",)
    raw_id_fields = ("created_by",)

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:
            return ("book", "number", "currency", "price_date", "prices", "created_by", "created_at")
        return ()

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change) -> None:
        from .services import validated_prices

        obj.prices = validated_prices(obj.prices)
        if obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
