"""The v1 URL root (/api/v1/): the OpenAPI document and its viewers, and every app's REST API.

Each app's API keeps its own namespace (sweeps_api, teams_api, ...); the estimates' API shares
the namespace `api` with the schema, as it always has. Apps are named by dotted string, so the
shared base imports none of them."""

from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

_api: list[URLPattern | URLResolver] = [
    path("", include("reports.api.urls")),
    path("schema", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI's start-up script is served from this URL (?script=), not inline: the CSP holds.
    path("docs", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("redoc", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
]

urlpatterns: list[URLPattern | URLResolver] = [
    path("", include((_api, "api"))),
    path("", include("sweeps.api.urls")),
    path("", include("teams.api.urls")),
    path("", include("pricebooks.api.urls")),
    path("", include("accounts.api.urls")),
    path("", include("integrations.api.urls")),
    path("", include("diagnosis.api.urls")),
]
