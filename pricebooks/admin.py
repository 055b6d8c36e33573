from django import forms
from django.contrib import admin
from django.db.models import Max

from api.field_text import field_text
from estimator.errors import ScenarioError

from .models import PriceBook, PriceBookVersion
from .services import validated_prices


class VersionAddForm(forms.ModelForm):
    """A new version: its number is the next of its book; the prices are checked by the core."""

    class Meta:
        model = PriceBookVersion
        fields = ("book", "currency", "price_date", "prices")

    def clean_prices(self):
        try:
            return validated_prices(data=self.cleaned_data.get("prices"))
        except ScenarioError as exc:
            raise forms.ValidationError([f"{e.field}: {field_text(e)}" for e in exc.errors]) from None


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
    readonly = ("book", "number", "currency", "price_date", "prices", "created_by", "created_at")

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = VersionAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        return self.readonly if obj is not None else ()

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change) -> None:
        if change:
            return  # every field is read-only: a saved version never changes
        last = PriceBookVersion.objects.filter(book=obj.book).aggregate(n=Max("number"))["n"] or 0
        obj.number, obj.created_by = last + 1, request.user
        super().save_model(request, obj, form, change)
