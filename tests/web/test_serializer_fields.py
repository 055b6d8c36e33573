"""reports.api.serializers.BuiltOnceModelSerializer: the model's fields are built once per class
(DRF builds them for every instance), and each instance still gets fields of its own."""

from rest_framework import serializers

from reports.api.serializers import BuiltOnceModelSerializer, EstimateSerializer
from reports.models import Estimate


def _estimate(name: str) -> Estimate:
    return Estimate(name=name, input={}, scenario={}, result={}, engine_version="1.0.0", catalog_version="c1")


def _counting_builds(monkeypatch) -> list[str]:
    built: list[str] = []
    real = serializers.ModelSerializer.build_field

    def counting(self, field_name, info, model_class, nested_depth):
        built.append(field_name)
        return real(self, field_name, info, model_class, nested_depth)

    monkeypatch.setattr(serializers.ModelSerializer, "build_field", counting)
    return built


def test_the_model_fields_are_built_for_the_first_instance_only(monkeypatch):
    built = _counting_builds(monkeypatch)

    class Names(BuiltOnceModelSerializer):
        class Meta:
            model = Estimate
            fields = ["id", "name"]

    assert Names(_estimate("a")).data == {"id": None, "name": "a"}
    assert built == ["id", "name"]
    assert Names(_estimate("b")).data == {"id": None, "name": "b"}
    assert built == ["id", "name"]  # the second instance copied the class's fields


def test_a_subclass_builds_its_own_fields_not_its_parents(monkeypatch):
    built = _counting_builds(monkeypatch)

    class Names(BuiltOnceModelSerializer):
        class Meta:
            model = Estimate
            fields = ["id", "name"]

    class NamesAndEngine(Names):
        class Meta:
            model = Estimate
            fields = ["name", "engine_version"]

    assert Names(_estimate("a")).data == {"id": None, "name": "a"}
    assert NamesAndEngine(_estimate("b")).data == {"name": "b", "engine_version": "1.0.0"}
    assert built == ["id", "name", "name", "engine_version"]


def test_each_instance_binds_fields_of_its_own():
    first, second = EstimateSerializer(_estimate("a")), EstimateSerializer(_estimate("b"))
    assert list(first.fields) == list(second.fields)
    for name in first.fields:
        assert first.fields[name] is not second.fields[name]
        assert first.fields[name].parent is first and second.fields[name].parent is second
        assert first.fields[name].field_name == name


def test_the_copied_fields_keep_what_the_model_says():
    for _ in range(2):  # the first instance builds, the second copies
        fields = EstimateSerializer(_estimate("a")).fields
        assert isinstance(fields["id"], serializers.IntegerField)
        assert isinstance(fields["name"], serializers.CharField)
        assert isinstance(fields["created_at"], serializers.DateTimeField)
        assert str(fields["created_at"].label) == "Created at"  # Estimate.created_at's verbose name
        model_built = ("id", "name", "engine_version", "catalog_version", "created_at")
        assert all(fields[name].read_only for name in model_built)  # Meta.read_only_fields
