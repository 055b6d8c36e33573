"""The report says where the days' band comes from (reports/summary.band_text), in both languages."""

from django.utils import translation

from reports.summary import band_text

EVIDENCE = {
    "source": "evidence",
    "key": "davinci/moe/mindspeed-2025",
    "basis": "*/moe/*",
    "rows": 15,
    "own_rows": 1,
    "p10_ratio": 0.49,
    "p90_ratio": 1.32,
    "widened_by": ["few-rows", "peak-range"],
}


def test_evidence_band_in_english():
    with translation.override("en"):
        text = band_text(EVIDENCE)
    assert "15 published runs of MoE plans on any chip with any stack" in text
    assert "49%" in text and "132%" in text
    assert "only 1 such run," in text and "such runs" not in text and "peak FLOP/s" in text


def test_counts_agree_with_their_nouns_in_english():
    """ "1 such run" and "1 published run", "3 such runs" (ngettext; zh has one form)."""
    one = {**EVIDENCE, "rows": 1, "own_rows": 3}
    with translation.override("en"):
        text = band_text(one)
    assert "from 1 published run of" in text and "only 3 such runs," in text
    with translation.override("zh-hans"):
        text = band_text(one)
    assert "1 个已发表的" in text and "3 个此类运行" in text


def test_evidence_band_in_chinese():
    with translation.override("zh-hans"):
        text = band_text(EVIDENCE)
    assert "15 个已发表的" in text and "MoE" in text and "任意芯片" in text
    assert "放宽" in text
    assert "published" not in text


def test_assumed_band_and_nothing():
    with translation.override("en"):
        # one percent sign (the msgid's "%%" was shown as it is), the spread the core assumes (25 %)
        assert band_text({"source": "assumed"}) == (
            "The band is ±25% of the MFU you gave: an assumption, not evidence."
        )
        assert band_text(None) == "" and band_text({"source": "given-range"}) == ""
    with translation.override("zh-hans"):
        assert band_text({"source": "assumed"}) == "该区间为您给定 MFU 的 ±25%：这是假设，而非实测证据。"


def test_release_spread_named_with_the_release():
    band = {**EVIDENCE, "widened_by": ["release-spread"], "release": "Megatron-Bridge 26.02 container"}
    with translation.override("en"):
        text = band_text(band)
    assert "releases of this software stack differ" in text and "Megatron-Bridge 26.02 container" in text
    with translation.override("zh-hans"):
        assert "软件栈各版本" in band_text(band)


def test_known_gap_said_in_both_languages():
    band = {**EVIDENCE, "widened_by": ["known-gap"]}
    with translation.override("en"):
        assert "does not explain yet" in band_text(band)
    with translation.override("zh-hans"):
        assert "尚无法解释" in band_text(band)
