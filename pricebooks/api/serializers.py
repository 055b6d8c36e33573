"""Input and output shapes of the price-book API. The prices document itself is validated by the
core (estimator.contract.price_book.PriceTable): errors name its path (`prices.servers.dgx-h100`)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import inline_refs
from estimator.contract.price_book import PriceTable
from pricebooks.models import PriceBook, PriceBookVersion

PRICES_SCHEMA = inline_refs(PriceTable.model_json_schema())


@extend_schema_field(PRICES_SCHEMA)
class PricesField(serializers.JSONField):
    """Only what differs from the catalog: {accelerators: {id: price per card}, servers: {id:
    chassis price without cards}, switches, transceivers, drives: {id: price}, cloud: {accelerator
    id: {on_demand, reserved} per card-hour}, electricity_per_kwh}, in the version's currency."""


class VersionInputSerializer(serializers.Serializer):
    currency = serializers.ChoiceField(choices=PriceBookVersion.Currency.choices, default="USD")
    price_date = serializers.DateField(help_text="The date the prices are quoted for (YYYY-MM-DD).")
    prices = PricesField()
    name = serializers.CharField(
        max_length=100, required=False, help_text="Rename the book at the same time."
    )


class BookInputSerializer(VersionInputSerializer):
    team = serializers.SlugField(max_length=50, help_text="Slug of one of your teams.")
    name = serializers.CharField(max_length=100)
    slug = serializers.SlugField(
        max_length=50, required=False, help_text="Default: from the name. References are `<team>/<slug>`."
    )


class VersionSerializer(serializers.ModelSerializer):
    version = serializers.IntegerField(source="number")
    prices = PricesField()
    created_by = serializers.SerializerMethodField()

    class Meta:
        model = PriceBookVersion
        fields = ["version", "currency", "price_date", "prices", "created_at", "created_by"]
        read_only_fields = fields

    def get_created_by(self, obj: PriceBookVersion) -> str | None:
        return obj.created_by.get_username() if obj.created_by is not None else None


class PriceBookSerializer(serializers.ModelSerializer):
    team: serializers.SlugRelatedField = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    reference = serializers.CharField(
        help_text="Put it in a scenario's cost.price_book (add @<version> to pin one)."
    )
    latest = serializers.SerializerMethodField()
    versions_url = serializers.SerializerMethodField()

    class Meta:
        model = PriceBook
        fields = ["id", "team", "slug", "name", "reference", "latest", "versions_url", "created_at"]
        read_only_fields = fields

    @extend_schema_field(VersionSerializer(allow_null=True))
    def get_latest(self, obj: PriceBook) -> dict | None:
        latest = obj.latest()
        return VersionSerializer(latest).data if latest else None

    def get_versions_url(self, obj: PriceBook) -> str:
        path = reverse("pricebooks_api:versions", args=[obj.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class PriceBookUpdateSerializer(PriceBookSerializer):
    version_created = serializers.BooleanField(
        help_text="true: the content differed from the latest version and was filed as a new one; "
        "false: it was the same, nothing was filed."
    )

    class Meta(PriceBookSerializer.Meta):
        fields = [*PriceBookSerializer.Meta.fields, "version_created"]
        read_only_fields = fields
