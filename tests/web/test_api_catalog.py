"""Catalog endpoints, the scenario JSON Schema, the OpenAPI schema and its interactive docs."""

import pytest

pytestmark = pytest.mark.django_db

CONTRACT_IDS = {
    "accelerators": [
        "a100-sxm-40gb",
        "a100-sxm-80gb",
        "h100-sxm",
        "h800-sxm",
        "h200-sxm",
        "b200",
        "gb200",
        "mi300x",
        "ascend-910b1",
        "ascend-910b2",
        "ascend-910b3",
        "ascend-910b4",
        "ascend-910c",
        "ascend-310p",
    ],
    "servers": [
        "atlas-800t-a2",
        "atlas-900-a3-node",
        "dgx-a100",
        "dgx-h100",
        "dgx-h200",
        "dgx-b200",
        "generic-8card",
    ],
    "models": [
        "qwen3-8b",
        "qwen3-30b-a3b",
        "qwen3-235b-a22b",
        "llama-3.1-8b",
        "llama-3.1-70b",
        "llama-3.1-405b",
        "deepseek-v3",
        "gpt3-175b",
    ],
}


def test_catalog_index(api_client):
    body = api_client.get("/api/v1/catalog").json()
    assert body["catalog_version"]
    assert set(body["kinds"]) == {"accelerators", "servers", "switches", "models"}


@pytest.mark.parametrize("kind", ["accelerators", "servers", "switches", "models"])
def test_catalog_lists(api_client, kind):
    response = api_client.get(f"/api/v1/catalog/{kind}")
    assert response.status_code == 200
    body = response.json()
    ids = {e["id"] for e in body["results"]}
    assert ids and set(CONTRACT_IDS.get(kind, [])) <= ids


def test_catalog_entries_carry_sources(api_client):
    entry = api_client.get("/api/v1/catalog/accelerators/ascend-910b2").json()
    assert entry["id"] == "ascend-910b2" and entry["hbm_bytes"] > 0
    assert entry["sources"] and all("source" in s and "as_of" in s for s in entry["sources"].values())


def test_catalog_unknowns_are_404(api_client):
    assert api_client.get("/api/v1/catalog/teapots").status_code == 404
    assert api_client.get("/api/v1/catalog/accelerators/no-such-chip").status_code == 404


def test_scenario_json_schema(api_client):
    schema = api_client.get("/api/v1/scenario-schema").json()
    assert {"model", "training", "cluster"} <= set(schema["properties"])


def test_openapi_schema(api_client):
    response = api_client.get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    paths = schema["paths"]
    for path in [
        "/api/v1/estimates",
        "/api/v1/estimates/{id}",
        "/api/v1/reports/{token}",
        "/api/v1/catalog/{kind}",
    ]:
        assert path in paths, path
    body = paths["/api/v1/estimates"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "training" in body["properties"] and "$defs" not in str(body)


@pytest.mark.parametrize("url", ["/api/v1/docs", "/api/v1/redoc"])
def test_docs_pages_use_no_cdn(client, url):
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html
