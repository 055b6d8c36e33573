from django.urls import path

from . import views

app_name = "accounts_api"

urlpatterns = [
    path("tokens", views.TokenListView.as_view(), name="tokens"),
    path("tokens/<int:pk>", views.TokenDetailView.as_view(), name="token"),
]
