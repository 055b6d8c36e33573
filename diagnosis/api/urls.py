from django.urls import path

from .views import DiagnoseView

app_name = "diagnosis_api"

urlpatterns = [path("diagnose", DiagnoseView.as_view(), name="diagnose")]
