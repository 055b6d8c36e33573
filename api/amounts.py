"""Amounts as people type them: 5000万, ¥5,000万元, 1.2亿, 500B, 1.5M, $2k, 5e11, 500,000,000.

One parser for every money and count field of the forms (here, in the shared base every web app may
use: the estimate form, the sweep builder and the price-book table). The magnitude words are CLDR's compact
number suffixes read from Babel (the same data reports.formatting writes them with): 万, 亿, 万亿 in
Chinese, K, M, B, T in English; both languages' are accepted whatever the page's language, as are
the SI prefixes k and G. Group separators and the decimal sign are the locales' (Babel); a currency
sign or code around the number (¥, $, US$, 元, CNY, USD) is dropped, the form's currency field says
which currency it is.
"""

from __future__ import annotations

import functools
import math
import re

from babel import Locale, numbers
from django import forms
from django.utils.translation import gettext_lazy as _

CLDR_LOCALES = ("zh_Hans_CN", "en")
SI = {"k": 1e3, "G": 1e9}
_CURRENCY = re.compile(r"^(?:US\$|CN¥|[$¥￥€£]|USD|CNY|RMB)|(?:元|人民币|美元|USD|CNY|RMB)$")
_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?"


@functools.cache
def suffixes() -> dict[str, float]:
    """Magnitude word -> factor, from CLDR's short compact decimal patterns ('0万' at 10000 -> 1e4)."""
    out = dict(SI)
    for name in CLDR_LOCALES:
        patterns = Locale.parse(name).compact_decimal_formats["short"]["other"]
        for magnitude, pattern in patterns.items():
            text = pattern.pattern
            word = text.replace("0", "").strip()
            if word:
                out.setdefault(word, int(magnitude) / 10 ** (text.count("0") - 1))
    return out


@functools.cache
def _pattern() -> re.Pattern[str]:
    words = sorted(suffixes(), key=len, reverse=True)  # 万亿 before 万
    return re.compile(rf"^({_NUMBER})({'|'.join(map(re.escape, words))})?$")


def parse(text: str, locale: str | None = None) -> float | None:
    """The number `text` stands for, or None when it is not an amount. `locale`: a Babel locale
    name whose group and decimal signs are read; default: those of every language of the site."""
    cleaned = re.sub(r"[\s_]", "", str(text))
    for name in (locale,) if locale else CLDR_LOCALES:
        loc = Locale.parse(name)
        group, decimal = numbers.get_group_symbol(loc), numbers.get_decimal_symbol(loc)
        cleaned = cleaned.replace(group, "").replace(decimal, ".")
    cleaned = _CURRENCY.sub("", cleaned)
    cleaned = _CURRENCY.sub("", cleaned)  # a sign in front and a word behind: ¥5000万元
    match = _pattern().match(cleaned)
    if not match:
        return None
    value = float(match.group(1)) * suffixes().get(match.group(2) or "", 1.0)
    return value if math.isfinite(value) else None


class AmountField(forms.CharField):
    """A money or count field that reads 5000万, 1.2亿, 500B or 1.5M (reports.amounts.parse); a
    text input, so the browser does not refuse the words before the server sees them."""

    default_error_messages = {"invalid": _("Enter a number such as 5000万, 1.2亿, 500B or 1.5M.")}

    def __init__(self, *, integer: bool = False, **kwargs):
        self.integer = integer
        kwargs.setdefault("widget", forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"}))
        super().__init__(**kwargs)

    def to_python(self, value):
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        number = parse(value)
        if number is None:
            sign = value.strip()[:1]
            if sign in ("-", "−") and parse(value.strip()[1:]) is not None:  # an amount, below zero
                raise forms.ValidationError(_("Enter an amount of zero or more."), code="min_value")
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        if self.integer:
            whole = round(number)
            if abs(number - whole) > 1e-9 * max(1.0, abs(number)):  # 1.024万 is 10240 exactly
                raise forms.ValidationError(_("Enter a whole number."), code="invalid")
            return int(whole)
        return number
