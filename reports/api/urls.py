"""REST API of estimates, shared reports, the catalog and the scenario schema. No app_name: the
v1 root (api.urls) mounts these in the namespace `api` they always had (reverse("api:estimates"))."""

from django.urls import path

from . import views

urlpatterns = [
    path("estimates", views.EstimateListCreateView.as_view(), name="estimates"),
    path("estimates/<int:pk>", views.EstimateDetailView.as_view(), name="estimate"),
    path("reports/<str:token>", views.SharedReportView.as_view(), name="report"),
    path("reports/<str:token>/recompute", views.RecomputeView.as_view(), name="report-recompute"),
    path("reports/<str:token>/cards", views.CardsCurveView.as_view(), name="report-cards"),
    path("catalog", views.CatalogIndexView.as_view(), name="catalog"),
    path("catalog/<str:kind>", views.CatalogListView.as_view(), name="catalog-list"),
    path("catalog/<str:kind>/<str:entry_id>", views.CatalogDetailView.as_view(), name="catalog-detail"),
    path("scenario-schema", views.ScenarioSchemaView.as_view(), name="scenario-schema"),
]
