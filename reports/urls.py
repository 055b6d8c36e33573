from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from . import views

app_name = "reports"

urlpatterns = [
    path("", views.new_estimate, name="new"),
    path("r/<str:token>/", views.report, name="report"),
    path("r/<str:token>/report.json", views.report_json, name="report-json"),
    path("r/<str:token>/report.csv", views.report_csv, name="report-csv"),
    path("r/<str:token>/report.xlsx", views.report_xlsx, name="report-xlsx"),
    path("r/<str:token>/recompute/", views.recompute, name="recompute"),
    path("compare/", views.compare_reports, name="compare"),
    path("compare/comparison.xlsx", views.compare_xlsx, name="compare-xlsx"),
    path("validation/", views.validation, name="validation"),
    path("estimates/", views.my_estimates, name="mine"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            template_name="reports/login.html", next_page=reverse_lazy("reports:mine")
        ),
        name="login",
    ),
    path(
        "accounts/logout/",
        auth_views.LogoutView.as_view(next_page=reverse_lazy("reports:new")),
        name="logout",
    ),
]
