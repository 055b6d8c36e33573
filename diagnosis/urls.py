from django.urls import path

from .api import DiagnoseView

app_name = "diagnosis"

urlpatterns = [path("diagnose", DiagnoseView.as_view(), name="diagnose")]
