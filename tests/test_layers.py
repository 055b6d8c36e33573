"""The web apps' layers (docs/architecture.md#layers): api/ is the shared REST base and the v1 URL
root only; each app keeps its REST API in <app>/api/ (views, serializers, urls) and its HTML in
pages.py (+ page_urls.py). Read from the source tree, without Django."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_import_cycles import PACKAGES, ROOT, import_graph, package_of

APPS = tuple(p for p in PACKAGES if p not in ("estimator", "api", "config"))  # the web apps
REST_BASES = {
    "APIView",
    "GenericAPIView",
    "ViewSet",
    "GenericViewSet",
    "ModelViewSet",
    "ReadOnlyModelViewSet",
}


def _rest_views(path: Path) -> list[str]:
    """Classes of a module that derive (by name) from one of DRF's view classes."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            if bases & REST_BASES:
                out.append(node.name)
    return out


def test_api_is_the_shared_base_and_imports_no_app():
    assert not (ROOT / "api" / "views.py").exists() and not (ROOT / "api" / "serializers.py").exists()
    reaching_up = sorted(
        (module, target)
        for module, targets in import_graph().items()
        if package_of(module) == "api"
        for target in targets
        if package_of(target) in APPS
    )
    assert reaching_up == []


def test_each_app_has_its_rest_api_in_its_api_package():
    for app in APPS:
        assert (ROOT / app / "api" / "urls.py").is_file(), app
        assert (ROOT / app / "api" / "views.py").is_file(), app
        for old in ("views.py", "urls.py", "serializers.py"):
            assert not (ROOT / app / old).exists(), (
                f"{app}/{old}: REST goes in {app}/api/, HTML in {app}/pages.py"
            )


def test_rest_views_are_defined_only_in_api_packages():
    misplaced = [
        f"{path.relative_to(ROOT)}: {name}"
        for app in (*APPS, "api", "config")
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts and "api" not in path.relative_to(ROOT / app).parts[:-1]
        for name in _rest_views(path)
    ]
    assert misplaced == []


def test_the_detector_sees_a_rest_view(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from rest_framework import views\nclass A(views.APIView): ...\nclass B: ...\n")
    assert _rest_views(module) == ["A"]


def _positional_services(path: Path) -> list[str]:
    """Public functions of a services/selectors module that accept an argument by position."""
    out = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        public = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_")
        if public and (node.args.posonlyargs or node.args.args or node.args.vararg):
            out.append(node.name)
    return out


def test_services_and_selectors_take_keywords_only():
    # HackSoft's styleguide, as NetBox-style layers use it: a call site names every argument, so a
    # service's parameters can be reordered or added to without silently shifting a caller's values.
    offenders = {
        f"{path.relative_to(ROOT)}": names
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if path.stem in ("services", "selectors") and (names := _positional_services(path))
    }
    assert offenders == {}


def test_the_keyword_detector_sees_a_positional_service(tmp_path):
    module = tmp_path / "services.py"
    module.write_text("def a(*, x): ...\ndef b(x, *, y): ...\ndef _c(x): ...\ndef d(*args): ...\n")
    assert _positional_services(module) == ["b", "d"]
