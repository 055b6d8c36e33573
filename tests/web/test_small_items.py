"""Issue 24's smaller items, each checked on the page or the function that makes it."""

import re

import pytest

from estimator.validation import validation_rows
from reports.typed import code_spans

pytestmark = pytest.mark.django_db


def test_validation_median_of_an_even_count_is_the_mean_of_the_middle_two(client):
    ascend = sorted(abs(r["error_pct"]) for r in validation_rows() if r["suite"] == "ascend")
    assert len(ascend) == 2  # two published Ascend runs: the median is their mean, not the larger
    html = client.get("/validation/").content.decode()
    row = re.search(r'href="#suite-ascend">.*?</tr>', html, re.S).group(0)
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert float(cells[1].rstrip("%")) == pytest.approx((ascend[0] + ascend[1]) / 2, rel=1e-3)


def test_validation_rows_of_every_suite_name_their_metric(client):
    assert all(r["metric"] for r in validation_rows())
    html = client.get("/zh-hans/validation/").content.decode()
    section = html[html.index('id="suite-megatron-2021"') :]
    assert "每卡硬件 TFLOP/s" in section[: section.index("</table>")]


def test_typed_things_in_a_sentence_are_code():
    html = code_spans("从 export HCCL_BUFFSIZE=256（MB）开始；Megatron --overlap-grad-reduce，设为 true <b>")
    assert "<code>export HCCL_BUFFSIZE=256</code>（MB）" in html
    assert "<code>--overlap-grad-reduce</code>" in html and "<code>true</code>" in html
    assert "&lt;b&gt;" in html  # the rest is escaped
    assert (
        str(code_spans("deepspeedai/DeepSpeed#823, #1629)"))
        == "<code>deepspeedai/DeepSpeed#823, #1629</code>)"
    )
