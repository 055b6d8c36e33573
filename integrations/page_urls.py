from django.urls import path

from . import pages

app_name = "integrations_pages"

urlpatterns = [
    path("<str:token>/", pages.batch, name="batch"),
    path("<str:token>/comparison.xlsx", pages.batch_xlsx, name="batch-xlsx"),
]
