from django.conf import settings
from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path

urlpatterns: list[URLPattern | URLResolver] = [
    path("api/v1/", include("api.urls")),  # every app's REST API, each in its namespace
    path("i18n/", include("django.conf.urls.i18n")),
    # staff manage everything here too (sign-in limited by django-axes); teams also at /teams/
    path("admin/", admin.site.urls),
]
urlpatterns += i18n_patterns(
    path("", include("reports.page_urls")),
    path("sweeps/", include("sweeps.page_urls")),
    path("price-books/", include("pricebooks.page_urls")),
    path("teams/", include("teams.page_urls")),
    path("accounts/tokens/", include("accounts.page_urls")),
    path("batches/", include("integrations.page_urls")),
    path("diagnose/", include("diagnosis.page_urls")),
    prefix_default_language=False,
)
if settings.OIDC_ENABLED:  # one callback address to register with the provider, in every language
    urlpatterns.append(path("oidc/", include("mozilla_django_oidc.urls")))
