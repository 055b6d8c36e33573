"""The API's one page shape for lists (?page=, ?page_size=): DRF's page-number pagination, 50 rows
a page by default and at most 200, so one request's work stays bounded."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
