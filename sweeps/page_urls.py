from django.urls import path

from . import pages

app_name = "sweeps_pages"

urlpatterns = [
    path("", pages.index, name="index"),
    path("<str:token>/", pages.report, name="report"),
    path("<str:token>/cancel", pages.cancel, name="cancel"),
    path("<str:token>/scenario/<int:index>.json", pages.scenario_json, name="scenario"),
    path("<str:token>/scenario/<int:index>/estimate", pages.estimate, name="estimate"),
]
