"""The reader's language as the web apps need it, in the shared base every app may import: whether
the page is Chinese, and the currency a new document starts in (CNY for a Chinese reader)."""

from __future__ import annotations

from django.utils.translation import get_language


def is_zh() -> bool:
    return (get_language() or "en").lower().startswith("zh")


def default_currency() -> str:
    """The currency a new scenario or price book starts in: CNY in Chinese, USD in English."""
    return "CNY" if is_zh() else "USD"
