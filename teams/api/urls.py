from django.urls import path

from . import views

app_name = "teams_api"

urlpatterns = [path("teams", views.TeamListView.as_view(), name="list")]
