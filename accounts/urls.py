from django.urls import path

from . import views

app_name = "accounts"

urlpatterns = [
    path("", views.tokens, name="tokens"),
    path("<int:pk>/revoke/", views.revoke, name="revoke"),
]
