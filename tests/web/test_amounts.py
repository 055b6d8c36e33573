"""Issue 24 item 3: amounts typed with 万/亿 (and K/M/B in English) parse in every money and count
field, by one parser (api.amounts) whose magnitude words are CLDR's (Babel)."""

import pytest
from django.utils import translation

from api.amounts import AmountField, parse, suffixes
from pricebooks.forms import PriceBookForm, cell
from reports.forms import EstimateForm
from sweeps.builder import SweepBuilderForm

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("5000万", 5000 * 10_000),
        ("¥5,000万元", 5000 * 10_000),
        ("1.2亿", 120_000_000),
        ("3万亿", 3 * 10**12),
        ("500B", 500 * 10**9),
        ("1.5M", 1_500_000),
        ("$2K", 2000),
        ("2k", 2000),
        ("US$18.1M", 18_100_000),
        ("5e11", 5 * 10**11),
        ("500,000,000", 500_000_000),
        ("  8 192 ", 8192),
        ("0.576", 0.576),
    ],
)
def test_amounts_as_people_type_them(text, value):
    assert parse(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text", ["", "abc", "5000万万", "1e999", "万", "5 000 apples", "--5", "NaN"])
def test_what_is_not_an_amount(text):
    assert parse(text) is None


def test_the_magnitude_words_are_cldrs():
    assert {k: suffixes()[k] for k in ("万", "亿", "万亿", "K", "M", "B", "T")} == {
        "万": 1e4,
        "亿": 1e8,
        "万亿": 1e12,
        "K": 1e3,
        "M": 1e6,
        "B": 1e9,
        "T": 1e12,
    }


def test_a_count_field_wants_a_whole_number():
    field = AmountField(integer=True)
    assert field.clean("1.024万") == 10240
    # in English whatever language an earlier test left active (the message is translated)
    with translation.override("en"), pytest.raises(Exception, match="whole number"):
        field.clean("1.5")


def _estimate_form(**fields) -> EstimateForm:
    data = {
        "model_source": "preset",
        "preset": "llama-3.1-70b",
        "accelerator": "ascend-910b2",
        "currency": "CNY",
    }
    return EstimateForm({**data, **fields})


def test_every_money_and_count_field_of_the_estimate_form_reads_wan_and_yi():
    form = _estimate_form(
        tokens="5000亿",
        sizing="cards",
        cards="1万",
        budget="5000万",
        server_price="180万",
        cloud_price_per_card_hour="1.2万",
        global_batch_tokens="400万",
        seq_len="8K",
    )
    assert form.is_valid(), form.errors
    doc = form.scenario()
    assert doc["training"] == {"tokens": 5e11, "global_batch_tokens": 4e6, "seq_len": 8000}
    assert doc["cluster"] == {"cards": 10_000}
    assert (doc["cost"]["budget"], doc["cost"]["server_price"]) == (5e7, 1.8e6)
    assert doc["cost"]["cloud_price_per_card_hour"] == 1.2e4


def test_the_budget_is_not_cut_to_its_digits_on_the_page(client):
    """The issue's case: "5000万" became ¥5,000 and the report said "1,746,631% of the budget"."""
    data = {
        "model_source": "preset",
        "preset": "llama-3.1-70b",
        "accelerator": "ascend-910b2",
        "currency": "CNY",
        "tokens": "5000亿",
        "sizing": "deadline",
        "target_days": "30",
        "budget": "5000万",
    }
    response = client.post("/zh-hans/", data)
    assert response.status_code == 302
    html = client.get(response["Location"]).content.decode()
    assert "¥5000万" in html and "¥5,000<" not in html


def test_the_sweep_builder_and_the_price_book_table_read_them_too():
    builder = SweepBuilderForm(
        {
            "name": "",
            "preset": "llama-3.1-70b",
            "accelerator": "ascend-910b2",
            "tokens": "1万亿",
            "sizing": "cards",
            "cards": "2K",
            "currency": "CNY",
            "budget": "1.2亿",
            "axis1_field": "efficiency.mfu",
            "axis1_list": "0.4, 0.5",
            "axis2_field": "training.tokens",
            "axis2_start": "5000亿",
            "axis2_stop": "1.5万亿",
            "axis2_step": "5000亿",
        }
    )
    assert builder.is_valid(), builder.errors
    assert (builder.cleaned_data["cards"], builder.cleaned_data["budget"]) == (2000, 1.2e8)
    assert builder.request()["axes"]["training.tokens"] == {"start": 5e11, "stop": 1.5e12, "step": 5e11}
    name = cell("servers", "atlas-800t-a2")
    book = PriceBookForm({"name": "b", "currency": "CNY", "price_date": "2026-12-01", name: "180万"})
    assert book.is_valid(), book.errors
    assert book.cleaned_data[name] == 1.8e6


@pytest.mark.parametrize("typed", ["-1", "−0.5", "-5000万"])
def test_a_negative_amount_is_refused_as_negative_not_as_no_number(typed):
    from django.core.exceptions import ValidationError

    for lang, expected in (
        ("en", "Enter an amount of zero or more."),
        ("zh-hans", "请输入大于或等于零的数。"),
    ):
        with translation.override(lang):
            with pytest.raises(ValidationError) as info:
                AmountField().clean(typed)
            assert info.value.messages == [expected], lang
