from django.urls import path

from . import pages

app_name = "pricebooks_pages"

urlpatterns = [
    path("", pages.index, name="index"),
    path("<int:pk>/", pages.edit, name="edit"),
]
