from django.urls import path

from . import pages

app_name = "diagnosis_pages"

urlpatterns = [path("", pages.diagnose, name="diagnose")]
