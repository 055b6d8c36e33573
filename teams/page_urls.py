from django.urls import path

from . import pages

app_name = "teams_pages"

urlpatterns = [
    path("", pages.index, name="index"),
    path("<slug:slug>/", pages.detail, name="detail"),
    path("<slug:slug>/members/<str:username>/role", pages.role, name="role"),
    path("<slug:slug>/members/<str:username>/remove", pages.remove, name="remove"),
]
