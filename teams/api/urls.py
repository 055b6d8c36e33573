from django.urls import path

from . import views

app_name = "teams_api"
urlpatterns = [
    path("teams", views.TeamListView.as_view(), name="list"),
    path("teams/<slug:slug>", views.TeamDetailView.as_view(), name="detail"),
    path("teams/<slug:slug>/members", views.MemberListView.as_view(), name="members"),
    path("teams/<slug:slug>/members/<str:username>", views.MemberDetailView.as_view(), name="member"),
]
