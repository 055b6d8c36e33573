"""Serializers of the sweep API. Input is validated by the core (estimator.contract.sweep.validate_sweep) so
every error carries a field path; these describe the shapes for the OpenAPI schema."""

from __future__ import annotations

from rest_framework import serializers

from api.schema import CallbackSerializer


class SweepRequestSerializer(serializers.Serializer):
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    base = serializers.JSONField(
        help_text="A scenario (docs/architecture.md#scenario-contract), the values every scenario shares."
    )
    axes = serializers.JSONField(
        help_text='{"<dotted field>": [values] | {"start", "stop", "step"}}; the product of the axes is the '
        "set of scenarios, the last axis varying fastest. Ranges include stop."
    )
    callback = CallbackSerializer(required=False)  # a webhook when it ends (sweeps.signals)


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Scenarios stored")
    total = serializers.IntegerField(help_text="Scenarios in the sweep")
    chunks_done = serializers.IntegerField()
    chunks_total = serializers.IntegerField()


class SweepListItemSerializer(serializers.Serializer):
    """A sweep as listed: its status without the base scenario and the summary."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=["queued", "running", "done", "failed", "cancelled"])
    progress = ProgressSerializer()
    timings = serializers.DictField(
        help_text="created_at, started_at, finished_at (RFC 3339, UTC), queue_wait_s, elapsed_s, compute_s, "
        "scenarios_per_s"
    )
    error = serializers.CharField(help_text="Why the sweep failed, readable; empty otherwise")
    axes = serializers.JSONField()
    currency = serializers.CharField(
        allow_null=True,
        help_text="ISO 4217 code of every amount of the sweep (summary, rows); null when cost.currency is an axis",
    )
    engine_version = serializers.CharField()
    catalog_version = serializers.CharField()
    share_url = serializers.CharField(help_text="Public, read-only report page")
    status_url = serializers.CharField()
    results_url = serializers.CharField()


class SweepStatusSerializer(SweepListItemSerializer):
    base = serializers.JSONField()
    summary = serializers.JSONField(
        allow_null=True,
        help_text="When done: counts, ranges, best rows per metric, "
        "Pareto fronts of days against cost, heatmap grids; `errors`: the rows without a plan by reason "
        "(the English sentence: rows), `error_codes`: each reason's code where it has one (the sentence: "
        "code, e.g. deadline-needs-too-many-cards; absent from sweeps finished before the codes), "
        "`error_details`: a refused group's errors where the reason is one (the sentence: a list of "
        "{field, message, code, params}, as a single estimate's error body; absent from sweeps finished before)",
    )


class ResultPageSerializer(serializers.Serializer):
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    page_size = serializers.IntegerField()
    count = serializers.IntegerField()
    columns = serializers.ListField(
        child=serializers.CharField(),
        help_text="index, the axes, then the result fields; `ok`, `error` (why a row has no plan, in English; "
        "null where planned), `reason_code` (that reason's code, empty where planned or without one: "
        "deadline-needs-too-many-cards, no-feasible-layout, run-never-finishes, budget-buys-no-cluster, "
        "layout-or-fabric-refuses-cards or a refused group's own code) and `reason_cards` (the cards the "
        "reason is about; null where none); `reason_errors` (a group the engine refuses as a whole: its errors "
        "as JSON text, a list of {field, message, code, params} as a single estimate's error body; null "
        "elsewhere and on rows computed before)",
    )
    rows = serializers.ListField(child=serializers.ListField())
    currency = serializers.CharField(
        allow_null=True,
        help_text="ISO 4217 code of the amount columns; null when cost.currency is an axis (each row's is in it)",
    )
    amount_columns = serializers.ListField(
        child=serializers.CharField(),
        help_text="The columns that are amounts (floats here; decimal strings with ?format=csv)",
    )
