from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from . import pages

app_name = "reports"

urlpatterns = [
    path("", pages.new_estimate, name="new"),
    path("r/<str:token>/", pages.report, name="report"),
    path("r/<str:token>/report.json", pages.report_json, name="report-json"),
    path("r/<str:token>/report.csv", pages.report_csv, name="report-csv"),
    path("r/<str:token>/report.xlsx", pages.report_xlsx, name="report-xlsx"),
    path("r/<str:token>/recompute/", pages.recompute, name="recompute"),
    path("compare/", pages.compare_reports, name="compare"),
    path("compare/comparison.xlsx", pages.compare_xlsx, name="compare-xlsx"),
    path("validation/", pages.validation, name="validation"),
    path("estimates/", pages.my_estimates, name="mine"),
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
