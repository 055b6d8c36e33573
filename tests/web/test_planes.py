"""The report's fabric section shows both planes of a supernode plan (issue 13)."""

import pytest

from reports.charts import planes

pytestmark = pytest.mark.django_db

CM384 = {
    "model": {"preset": "deepseek-v3"},
    "hardware": {"accelerator": "ascend-910c"},
    "training": {"tokens": 1e12},
    "cluster": {"cards": 2304},
}


def test_report_shows_scaleup_and_scaleout_planes(client, make_estimate):
    est = make_estimate(data=CM384)
    html = client.get(f"/r/{est.share_token}/").content.decode()
    assert 'id="planes"' in html and 'id="chart-planes"' in html
    table = html[html.index('id="planes-table"') : html.index("</table>", html.index('id="planes-table"'))]
    # per supernode 7 x 48 = 336 L1 chips and 112 L2 switches; 6 x 336 = 2,016 and 6 x 112 = 672
    # in the cluster; 6 x 5,376 LPO modules; 288 scale-out nodes (6 x 48)
    for text in ("56 × 400", "8 × 400", "tier 1: 336", "tier 2: 112", "2,016", "672", "32,256", "288", "VPC"):
        assert text in table, text
    assert 'id="planes-versus"' in html
    start = html.index('id="headline-capex"')
    headline = html[start : html.index('id="headline-power"', start)]
    assert "scale-up plane adds" in headline  # the capex breakdown names the plane it adds


def test_eight_card_nodes_have_no_planes_section(client, make_estimate):
    est = make_estimate(data={**CM384, "hardware": {"accelerator": "ascend-910b2"}})
    html = client.get(f"/r/{est.share_token}/").content.decode()
    assert 'id="planes"' not in html and 'id="chart-planes"' not in html


def test_planes_chart_counts_each_plane(make_estimate):
    fig = planes(make_estimate(data=CM384).result)
    names = [t.name for t in fig.data]
    assert len(names) == 3  # scale-up, scale-out, VPC
    up = dict(zip(fig.data[0].x, fig.data[0].y, strict=True))
    assert up["Optical modules"] == 6 * 5376 and up["Racks"] == 24
    assert planes({"network": {}, "scaleup": {"unit": {"degenerate": True}}}) is None
    assert planes({}) is None
