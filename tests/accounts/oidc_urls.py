"""The project's URLs plus the OIDC ones, as config/urls.py has them when OIDC is configured (the
test process starts with it off, and URLs are read once)."""

from django.urls import include, path

from config.urls import urlpatterns as project

urlpatterns = [*project, path("oidc/", include("mozilla_django_oidc.urls"))]
