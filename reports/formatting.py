"""Locale-aware number formatting for pages, charts and exports (no database), from Babel's CLDR
data rather than hand-written rules: thousands separators everywhere, compact large numbers in K/M/B
(English) or 万/亿 (Chinese, the way the source article writes "5000亿 tokens"), currencies with
their CLDR symbols. Bytes, watts and FLOP keep SI prefixes in both languages (1 GB = 1e9 bytes).
"""

from __future__ import annotations

import functools
import math
import re
from numbers import Real

from babel import Locale
from babel import numbers as babel
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from api.locale import (
    default_currency as default_currency,  # re-exported: reports.formatting.default_currency
)
from api.locale import is_zh

DASH = "—"
_LEADING_DIGITS = re.compile(r"\d[\d,]*")


_is_zh = is_zh  # the rule lives in api.locale (price books need it too)


def babel_locale() -> str:
    """The CLDR locale of the active language (zh-hans -> zh_Hans_CN)."""
    return "zh_Hans_CN" if _is_zh() else "en"


def _ok(value) -> bool:
    """A finite real number (an int too large for a float, as a stored result may hold, is not)."""
    if not isinstance(value, Real) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _guarded(fmt, value, *args, **kw) -> str:
    """Babel's formatter, or plain scientific notation for a magnitude its decimal context cannot
    hold (an estimate stored before a limit existed may carry 1e308): a page never fails on a number."""
    try:
        return fmt(value, *args, **kw)
    except (ValueError, ArithmeticError):
        return f"{float(value):.4g}"


@functools.lru_cache(maxsize=8)
def _locale(name: str) -> Locale:
    """The parsed CLDR locale (babel parses the name and loads its data again on every call)."""
    return Locale.parse(name)


@functools.lru_cache(maxsize=64)
def _decimal_pattern(decimals: int) -> babel.NumberPattern:
    """The parsed '#,##0.00...' pattern with `decimals` places."""
    return babel.parse_pattern("#,##0" + ("." + "0" * decimals if decimals > 0 else ""))


def _format_decimal(value: float, decimals: int) -> str:
    """babel.format_decimal(value, format=<pattern>, locale=<active>) on the parsed, cached
    pattern and locale: the same text, a third of the time (issue 27: a report page formats some
    two hundred numbers)."""
    return _decimal_pattern(decimals).apply(value, _locale(babel_locale()))


def number(value, decimals: int = 0) -> str:
    """A plain number with the locale's grouping and decimal separator."""
    if not _ok(value):
        return DASH
    return _guarded(_format_decimal, float(value), decimals)


def _sig(value: float, digits: int = 3) -> str:
    """`value` to about `digits` significant figures, without trailing zeros."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = number(value, decimals)
    if decimals and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _compact(fmt, value: float, digits: int, *args) -> str:
    """Babel's compact form with about `digits` significant figures (CLDR short formats)."""
    loc = babel_locale()
    probe = _guarded(fmt, value, *args, locale=loc, fraction_digits=0)
    lead = _LEADING_DIGITS.search(probe)
    whole = len(lead.group(0).replace(",", "")) if lead else 1
    return _guarded(fmt, value, *args, locale=loc, fraction_digits=max(0, digits - whole))


def big(value) -> str:
    """A large count: 5e11 -> '500B' (English) or '5000亿' (Chinese)."""
    if not _ok(value):
        return DASH
    v = float(value)
    if abs(v) < 1e4:
        return _sig(v, 4)
    return _compact(babel.format_compact_decimal, v, 4 if _is_zh() else 3)


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
    mantissa, _e, exponent = f"{float(value):.{max(digits - 1, 0)}e}".partition("e")
    mant, exp = float(mantissa), int(exponent)  # no 10**exp: it is 0.0 below 1e-323 (a stored 5e-324)
    sup = str(exp).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{number(mant, digits - 1)} × 10{sup}"


def bound(value) -> str:
    """A range's limit as a reader reads it (form and field errors): compact up to a thousand
    trillion (1e10 -> '10B' / '100亿'), scientific beyond (1e17 -> '1 × 10¹⁷'), where CLDR's short
    forms run out ('100000T', '100000万亿' read as nothing), never Python's '1e+17'."""
    if not _ok(value):
        return DASH
    v = float(value)
    if abs(v) < 1e15:
        return big(v)
    mantissa, times, power = sci(v).partition(" × ")
    if "." in mantissa:  # '1.00 × 10¹⁷' -> '1 × 10¹⁷': a limit is exact, not a measurement
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}{times}{power}"


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


def plural_n(shown: str) -> int:
    """The count ngettext chooses the form by, from the number as shown: "1" is singular (1.0
    shown as "1" too), anything else plural (English: 0 days, 1.5 days; Chinese has one form)."""
    return 1 if shown == "1" else 2


def days(value) -> str:
    if not _ok(value):
        return DASH
    shown = _sig(float(value))
    return ngettext("%(value)s day", "%(value)s days", plural_n(shown)) % {"value": shown}


def months(value) -> str:
    if not _ok(value):
        return DASH
    shown = _sig(float(value))
    return ngettext("%(value)s month", "%(value)s months", plural_n(shown)) % {"value": shown}


def percent(value, decimals: int = 1) -> str:
    """A fraction (0.42) as a percentage ('42.0%')."""
    if not _ok(value):
        return DASH
    pattern = "#,##0" + ("." + "0" * decimals if decimals > 0 else "") + "%"
    return _guarded(babel.format_percent, float(value), format=pattern, locale=babel_locale())


def percent_points(value) -> str:
    """A figure already in percent (a validation row's error_pct, 1.999) as the site writes a
    percentage ('2.0%'), one decimal; under 1% two, so 0.04592 reads '0.05%' and not '0.0%'."""
    if not _ok(value):
        return DASH
    v = float(value)
    return percent(v / 100, 1 if abs(v) >= 1 else 2)


def money(value, currency: str = "USD") -> str:
    """An amount in CLDR's compact currency form: '$18.1M', '¥8733万', 'US$1813万'."""
    if not _ok(value):
        return DASH
    v = float(value)
    if abs(v) < 1e4:
        if abs(v) < 100:
            return _guarded(babel.format_currency, v, currency, locale=babel_locale())
        return money_full(v, currency)
    return _compact(babel.format_compact_currency, v, 4 if _is_zh() else 3, currency)


def money_full(value, currency: str = "USD") -> str:
    """An amount to the unit with separators ('¥87,331,536'), for tables a finance team checks."""
    if not _ok(value):
        return DASH
    return _guarded(
        babel.format_currency,
        round(float(value)),
        currency,
        locale=babel_locale(),
        format="¤#,##0",
        currency_digits=False,
    )


def currency_symbol(currency: str) -> str:
    return babel.get_currency_symbol(currency, locale=babel_locale())


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
    "bound": bound,
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
    "percent_points": percent_points,
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
