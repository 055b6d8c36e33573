"""Open unprefixed page URLs (share links, "/") in the reader's language.

With `prefix_default_language=False`, Django serves every unprefixed URL in English. A reader whose
language cookie (set by the switcher) or browser prefers Simplified Chinese is redirected to the
/zh-hans/ URL of the same page instead, so a forwarded link opens in the reader's language.
"""

from django.conf import settings
from django.http import HttpResponseRedirect
from django.urls import translate_url
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language_from_path, get_language_from_request

SKIP_PREFIXES = ("/api/", "/static/", "/i18n/", "/admin/")


class PreferredLanguageRedirectMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        target = self._preferred_url(request)
        if target is not None:
            response = HttpResponseRedirect(target)
            response["Vary"] = "Accept-Language, Cookie"
            return response
        return self.get_response(request)

    @staticmethod
    def _preferred_url(request) -> str | None:
        if request.method not in ("GET", "HEAD") or request.path.startswith(SKIP_PREFIXES):
            return None
        if get_language_from_path(request.path_info) is not None:
            return None  # the URL names its language
        preferred = get_language_from_request(request, check_path=False)
        if not preferred or preferred == settings.LANGUAGE_CODE:
            return None
        here = request.get_full_path()
        if not here.startswith("/") or here.startswith("//"):
            return None  # "//evil.example/" is another host to a browser: never a redirect target
        target = translate_url(here, preferred)
        if target == here or not target.startswith("/") or target.startswith("//"):
            return None
        # only to this host (a path, no scheme or authority)
        return target if url_has_allowed_host_and_scheme(target, allowed_hosts=None) else None
