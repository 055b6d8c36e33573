"""Numbers per locale (Babel, CLDR): thousands for English, 万/亿 for Chinese, separators in both."""

from django.utils import translation

from reports import formatting as f


def test_english():
    with translation.override("en"):
        assert f.big(5e11) == "500B"
        assert f.count(1024) == "1,024"
        assert f.money(18_130_513, "USD") == "$18.1M"
        assert f.bytes_(64e9) == "64 GB"
        assert f.percent(0.42) == "42.0%"
        assert f.days(29.97) == "30 days"


def test_chinese():
    with translation.override("zh-hans"):
        assert f.big(5e11) == "5000亿"
        assert f.count(1024) == "1,024"  # CLDR groups thousands in Chinese too
        assert f.money(18_130_513, "USD") == "US$1813万"
        assert f.money(1.2e9, "CNY") == "¥12亿"
        assert f.bytes_(64e9) == "64 GB"


def test_non_numbers_show_a_dash():
    assert f.big(None) == f.count(float("nan")) == f.money("x") == "—"


def test_by_field_name():
    with translation.override("en"):
        assert f.for_key("compute.tokens_per_s", 193_000) == "193K/s"
        assert f.for_key("hot.write_bytes_per_s", 7.06e9) == "7.06 GB/s"
        assert f.for_key("parallelism.step_time_s", 21.7) == "21.7 s"
        assert f.for_key("memory.per_card_bytes.total", 56e9) == "56 GB"
        assert f.for_key("predicted_mfu", 0.52) == "52.0%"
        assert f.for_key("power.facility_w", 498_000) == "498 kW"


def test_money_follows_the_currency_and_language():
    with translation.override("en"):
        assert f.money(87_331_536, "CNY") == "CN¥87.3M"
        assert f.money(2500, "CNY") == "CN¥2,500"
        assert f.money_full(87_331_536, "CNY") == "CN¥87,331,536"
        assert f.default_currency() == "USD"
    with translation.override("zh-hans"):
        assert f.money(87_331_536, "CNY") == "¥8733万"  # the "287M CNY" axis becomes 万
        assert f.big(354e12) == "354万亿"
        assert f.number(354e12) == "354,000,000,000,000"
        assert f.default_currency() == "CNY"
