"""Locale-aware number formatting for pages and charts (no database).

English groups thousands and scales by thousand (K, M, B, T); Simplified Chinese writes large
counts in 万 (1e4) and 亿 (1e8), the way the source article writes "5000亿 tokens". Bytes, watts and
FLOP keep SI prefixes in both languages (decimal: 1 GB = 1e9 bytes).
"""

from __future__ import annotations

import math
from numbers import Real

from django.utils import formats
from django.utils.translation import get_language
from django.utils.translation import gettext as _

DASH = "—"


def _is_zh() -> bool:
    return (get_language() or "en").lower().startswith("zh")


def _ok(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def number(value, decimals: int = 0) -> str:
    """A plain number with the locale's grouping and decimal separator."""
    if not _ok(value):
        return DASH
    return formats.number_format(
        round(float(value), decimals), decimal_pos=decimals, use_l10n=True, force_grouping=True
    )


def _sig(value: float, digits: int = 3) -> str:
    """`value` to about `digits` significant figures, without trailing zeros."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = number(value, decimals)
    if decimals and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def big(value) -> str:
    """A large count: 5e11 -> '500 B' (English) or '5000亿' (Chinese)."""
    if not _ok(value):
        return DASH
    v = float(value)
    if _is_zh():
        for scale, unit in ((1e12, "万亿"), (1e8, "亿"), (1e4, "万")):
            if abs(v) >= scale:
                return f"{_sig(v / scale, 4)}{unit}"
        return _sig(v, 4)
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(v) >= scale:
            return f"{_sig(v / scale)} {unit}"
    return _sig(v)


def count(value) -> str:
    """A whole count of things (cards, servers, switches)."""
    if not _ok(value):
        return DASH
    return number(round(value), 0)


def sci(value, digits: int = 3) -> str:
    """Scientific notation for FLOP counts: 2.1e23 -> '2.10 × 10²³'."""
    if not _ok(value):
        return DASH
    if value == 0:
        return "0"
    exp = math.floor(math.log10(abs(value)))
    mant = value / 10**exp
    sup = str(exp).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{number(mant, digits - 1)} × 10{sup}"


def _si(value, unit: str, digits: int = 3) -> str:
    if not _ok(value):
        return DASH
    v = float(value)
    for scale, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{_sig(v / scale, digits)} {prefix}{unit}"
    return f"{_sig(v, digits)} {unit}"


def bytes_(value) -> str:
    return _si(value, "B")


def bytes_per_s(value) -> str:
    return _si(value, "B/s")


def bits_per_s(value) -> str:
    return _si(value, "bit/s")


def watts(value) -> str:
    return _si(value, "W")


def watt_hours(value) -> str:
    return _si(value, "Wh")


def flops(value) -> str:
    return sci(value)


def flop_per_s(value) -> str:
    return _si(value, "FLOP/s")


def seconds(value) -> str:
    if not _ok(value):
        return DASH
    v = float(value)
    if abs(v) < 1:
        return _("%(value)s ms") % {"value": _sig(v * 1000)}
    if abs(v) < 600:
        return _("%(value)s s") % {"value": _sig(v)}
    if abs(v) < 3 * 3600:
        return _("%(value)s min") % {"value": _sig(v / 60)}
    return _("%(value)s h") % {"value": _sig(v / 3600)}


def days(value) -> str:
    if not _ok(value):
        return DASH
    return _("%(value)s days") % {"value": _sig(float(value))}


def months(value) -> str:
    if not _ok(value):
        return DASH
    return _("%(value)s months") % {"value": _sig(float(value))}


def percent(value, decimals: int = 1) -> str:
    """A fraction (0.42) as a percentage ('42.0%')."""
    if not _ok(value):
        return DASH
    return f"{number(float(value) * 100, decimals)}%"


_SYMBOLS = {"USD": "$", "CNY": "¥", "EUR": "€"}


def money(value, currency: str = "USD") -> str:
    """An amount: '$12.3 M' in English, '1230万美元' in Chinese."""
    if not _ok(value):
        return DASH
    v = float(value)
    if _is_zh():
        suffix = {"USD": "美元", "CNY": "元", "EUR": "欧元"}.get(currency, f" {currency}")
        return f"{big(v)}{suffix}"
    symbol = _SYMBOLS.get(currency, f"{currency} ")
    if abs(v) < 1e4:
        return f"{symbol}{number(v, 2 if abs(v) < 100 else 0)}"
    return f"{symbol}{big(v)}"


def ratio(value) -> str:
    if not _ok(value):
        return DASH
    return f"{_sig(float(value))}:1"


def auto(value) -> str:
    """Anything from a result: numbers to about 4 significant figures, the rest as text."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if _ok(value):
        v = float(value)
        if v == int(v) and abs(v) < 1e15:
            return number(v, 0)
        if abs(v) >= 1e6 or abs(v) < 1e-3:
            return sci(v)
        return _sig(v, 4)
    if isinstance(value, Real):
        return DASH
    if isinstance(value, list | tuple):
        return ", ".join(auto(v) for v in value)
    return str(value)


KINDS = {
    "count": count,
    "big": big,
    "bytes": bytes_,
    "bytes_per_s": bytes_per_s,
    "bits_per_s": bits_per_s,
    "watts": watts,
    "watt_hours": watt_hours,
    "flops": flops,
    "flop_per_s": flop_per_s,
    "seconds": seconds,
    "days": days,
    "months": months,
    "percent": percent,
    "ratio": ratio,
    "auto": auto,
}


def by_kind(value, kind: str, currency: str = "USD") -> str:
    if kind == "money":
        return money(value, currency)
    return KINDS.get(kind, auto)(value)


def for_key(path: str, value, currency: str = "USD") -> str:
    """Format a result field by its name's unit suffix (docs/architecture.md#scenario-contract: the unit is in the name)."""
    if not _ok(value):
        return auto(value)
    key = path.rsplit(".", 1)[-1]
    full = path.lower()
    if key.endswith("bytes_per_s"):
        return bytes_per_s(value)
    if key.endswith("_per_s"):
        return f"{big(value)}/s"
    if key.endswith("_bytes") or ".per_card_bytes." in f".{full}." or full.endswith("bytes"):
        return bytes_(value)
    if key.endswith("_bps"):
        return bits_per_s(value)
    if key.endswith("_wh"):
        return watt_hours(value)
    if key.endswith("_w"):
        return watts(value)
    if key.endswith("_days"):
        return days(value)
    if key.endswith("_months"):
        return months(value)
    if key.endswith("_s") or ".breakdown_s." in f".{full}.":
        return seconds(value)
    if key in ("mfu", "hfu", "predicted_mfu", "predicted_hfu", "bubble_fraction") or key.endswith(
        "_fraction"
    ):
        return percent(value)
    if key.endswith("_flop") or key.startswith("flop_per_token"):
        return flops(value)
    if full.startswith(("capex", "run")) or key.endswith(("_usd", "_cost")):
        return money(value, currency)
    return auto(value)
