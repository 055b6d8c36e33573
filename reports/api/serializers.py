"""Output serializers of the estimates and reports API (input is the scenario JSON itself, validated
by the core)."""

from __future__ import annotations

import copy
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from api.result_schema import RESULT_REF
from reports.models import Estimate
from reports.money import money, result_amounts, result_currency
from reports.summary import HEADLINE, dig


# A ModelSerializer whose fields are built from its model and Meta once per class, then copied for
# each instance. DRF builds them anew for every instance (the model's field introspection: ~0.3 ms
# of every estimate POST and read, issue 27); the copy is what DRF does with declared fields anyway
# (Serializer.get_fields: copy.deepcopy), so each instance still binds fields of its own and nothing
# of one request reaches another. (A comment, not a docstring: drf-spectacular would print a
# docstring as the description of every schema component built on it.)
class BuiltOnceModelSerializer(serializers.ModelSerializer):
    def get_fields(self) -> dict[str, Any]:
        cls = type(self)
        built = cls.__dict__.get("_built_fields")  # this class's own, never a parent's
        if built is None:
            built = super().get_fields()
            cls._built_fields = built  # type: ignore[attr-defined]  # the class's template
        return copy.deepcopy(built)


def share_url(request, estimate: Estimate) -> str:
    """Absolute, language-neutral link to the report page (the viewer's language applies)."""
    with translation.override(settings.LANGUAGE_CODE):
        path = reverse("reports:report", args=[estimate.share_token])
    return request.build_absolute_uri(path) if request is not None else path


class _ShareUrlMixin(serializers.Serializer):
    share_url = serializers.SerializerMethodField(help_text="Public, read-only link to the report page.")
    report_url = serializers.SerializerMethodField(
        help_text="The same report as JSON: GET /api/v1/reports/{token}."
    )

    def get_share_url(self, obj: Estimate) -> str:
        return share_url(self.context.get("request"), obj)

    def get_report_url(self, obj: Estimate) -> str:
        path = reverse("api:report", args=[obj.share_token])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class BookSummarySerializer(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.IntegerField()
    price_date = serializers.DateField()
    currency = serializers.CharField()


def book_summary(document: dict | None) -> dict | None:
    """Name, version, price date and currency of a stored price-book document (null without one)."""
    if not document:
        return None
    return {k: document.get(k) for k in ("name", "version", "price_date", "currency")}


class MoneySerializer(serializers.Serializer):
    amount = serializers.RegexField(
        r"^-?[0-9]+(\.[0-9]+)?$",
        help_text="A decimal string, rounded to the currency's minor unit (rates: two places more).",
    )
    currency = serializers.RegexField(r"^[A-Z]{3}$", help_text="ISO 4217 code, e.g. USD, CNY.")


class _AmountsMixin(serializers.Serializer):
    currency = serializers.SerializerMethodField(help_text="ISO 4217 currency of every amount of the result.")
    amounts = serializers.SerializerMethodField(
        help_text="Every amount of `result` as a decimal string with its currency, keyed by its dotted "
        "path (`cost.capex.total`, `cost.run.owned`, ...): read money from here, not from the floats."
    )

    def get_currency(self, obj: Estimate) -> str:
        return result_currency(obj.result)

    @extend_schema_field(serializers.DictField(child=MoneySerializer()))
    def get_amounts(self, obj: Estimate) -> dict:
        return result_amounts(obj.result)


class _TeamAndBookMixin(serializers.Serializer):
    team = serializers.SerializerMethodField(
        help_text="Slug of the team whose members see it; null: the owner only."
    )
    price_book = serializers.SerializerMethodField(
        help_text="The price book version the estimate used (as stored with it), or null for the catalog's prices."
    )

    def get_team(self, obj: Estimate) -> str | None:
        return obj.team.slug if obj.team is not None else None

    @extend_schema_field(BookSummarySerializer(allow_null=True))
    def get_price_book(self, obj: Estimate) -> dict | None:
        return book_summary(obj.price_book)


@extend_schema_field(RESULT_REF)
class ResultField(serializers.JSONField):
    """The plan's sections (api.result_schema names their schemas)."""


@extend_schema_field({"oneOf": [RESULT_REF, {"type": "null"}]})
class RecomputedResultField(serializers.JSONField):
    pass


class EstimateSerializer(_AmountsMixin, _TeamAndBookMixin, _ShareUrlMixin, BuiltOnceModelSerializer):
    scenario = serializers.JSONField(
        help_text="The normalized scenario: the input with every default filled."
    )
    result = ResultField(
        help_text="compute, parallelism, memory, network, storage, power, cost, ... (docs/architecture.md#scenario-contract)."
    )

    class Meta:
        model = Estimate
        fields = [
            "id",
            "name",
            "share_url",
            "report_url",
            "team",
            "price_book",
            "scenario",
            "result",
            "currency",
            "amounts",
            "engine_version",
            "catalog_version",
            "created_at",
        ]
        read_only_fields = fields


@extend_schema_serializer(deprecate_fields=["capex"])
class HeadlineSerializer(serializers.Serializer):
    cards = serializers.IntegerField(allow_null=True, help_text="Accelerator cards.")
    servers = serializers.IntegerField(allow_null=True, help_text="Servers (nodes).")
    days = serializers.FloatField(allow_null=True, help_text="Wall-clock days of training.")
    capex = serializers.FloatField(
        allow_null=True,
        help_text="Deprecated (Sunset 2027-06-30, docs/api-versioning.md): the cluster cost as a float, "
        "without its currency. Use capex_amount.",
    )
    capex_amount = MoneySerializer(allow_null=True, help_text="The cluster cost (capex), with its currency.")
    currency = serializers.CharField(help_text="ISO 4217 currency of the estimate's amounts.")
    power = serializers.FloatField(allow_null=True, help_text="Facility power, watts.")


class EstimateListItemSerializer(_TeamAndBookMixin, _ShareUrlMixin, BuiltOnceModelSerializer):
    headline = serializers.SerializerMethodField(help_text="cards, servers, days, capex and facility power.")

    class Meta:
        model = Estimate
        fields = [
            "id",
            "name",
            "share_url",
            "report_url",
            "headline",
            "team",
            "price_book",
            "engine_version",
            "catalog_version",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(HeadlineSerializer)
    def get_headline(self, obj: Estimate) -> dict:
        out = {key: dig(obj.result, path) for key, _label, path, _kind in HEADLINE}
        currency = result_currency(obj.result)
        return {**out, "currency": currency, "capex_amount": money(out["capex"], currency)}


class SharedReportSerializer(_AmountsMixin, _ShareUrlMixin, BuiltOnceModelSerializer):
    """A shared report: no id and no owner, only what the link shows."""

    scenario = serializers.JSONField()
    result = ResultField()

    class Meta:
        model = Estimate
        fields = [
            "name",
            "share_url",
            "report_url",
            "scenario",
            "result",
            "currency",
            "amounts",
            "engine_version",
            "catalog_version",
            "created_at",
        ]
        read_only_fields = fields


class DiffRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a data field, not Field.label
    before = serializers.CharField()
    after = serializers.CharField()
    change = serializers.FloatField(allow_null=True)
