from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from . import views

app_name = "api"

urlpatterns = [
    path("estimates", views.EstimateListCreateView.as_view(), name="estimates"),
    path("estimates/<int:pk>", views.EstimateDetailView.as_view(), name="estimate"),
    path("reports/<str:token>", views.SharedReportView.as_view(), name="report"),
    path("reports/<str:token>/recompute", views.RecomputeView.as_view(), name="report-recompute"),
    path("catalog", views.CatalogIndexView.as_view(), name="catalog"),
    path("catalog/<str:kind>", views.CatalogListView.as_view(), name="catalog-list"),
    path("catalog/<str:kind>/<str:entry_id>", views.CatalogDetailView.as_view(), name="catalog-detail"),
    path("scenario-schema", views.ScenarioSchemaView.as_view(), name="scenario-schema"),
    path("schema", SpectacularAPIView.as_view(), name="schema"),
    path("docs", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
]
