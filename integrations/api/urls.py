from django.urls import path

from . import views

app_name = "integrations_api"

urlpatterns = [
    path("estimates/batch", views.BatchListCreateView.as_view(), name="batches"),
    path("estimates/batch/<int:pk>", views.BatchDetailView.as_view(), name="batch"),
    path("estimates/batch/shared/<str:token>", views.SharedBatchView.as_view(), name="batch-shared"),
    path("webhooks/secret", views.SigningSecretView.as_view(), name="secret"),
    path("webhooks/secret/rotate", views.SigningSecretRotateView.as_view(), name="secret-rotate"),
    path("webhooks/deliveries", views.DeliveriesView.as_view(), name="deliveries"),
]
