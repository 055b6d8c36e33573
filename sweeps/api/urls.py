from django.urls import path

from . import views

app_name = "sweeps_api"
SHARE_PREFIX = "sweeps/shared"  # public, read-only views of a sweep by its share token

urlpatterns = [
    path("sweeps", views.SweepListCreateView.as_view(), name="list"),
    path(f"{SHARE_PREFIX}/<str:token>", views.SharedSweepView.as_view(), name="shared"),
    path(
        f"{SHARE_PREFIX}/<str:token>/results", views.SharedSweepResultsView.as_view(), name="shared-results"
    ),
    path("sweeps/<int:pk>", views.SweepDetailView.as_view(), name="detail"),
    path("sweeps/<int:pk>/results", views.SweepResultsView.as_view(), name="results"),
    path("sweeps/<int:pk>/cancel", views.SweepCancelView.as_view(), name="cancel"),
]
