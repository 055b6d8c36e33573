from django.urls import path

from . import pages

app_name = "accounts"  # the pages; the API is accounts_api (urls.py)

urlpatterns = [
    path("", pages.tokens, name="tokens"),
    path("<int:pk>/revoke/", pages.revoke, name="revoke"),
]
