"""The worked example of docs/procurement.md, run as a user would: the script files each vendor's
price list as a price book of the user's team, posts a batch of quotes that name them to a live
server, follows the comparison link and downloads the Excel file."""

import io
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook

from integrations.models import Batch, IdempotencyRecord
from pricebooks.models import PriceBook
from reports.models import Estimate
from teams.models import Membership, Team

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "examples" / "procurement_quotes.py"

pytestmark = pytest.mark.django_db(transaction=True)


def _run(live_server, token: str, out) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--base-url", live_server.url, "--token", token, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin"},  # the standard library only: no project on the path
    )


def test_the_procurement_script_gets_one_column_per_quote(live_server, user, tmp_path, eager_celery):
    """The batch task runs eagerly in the live server (as a worker would, a moment later); the
    script posts (202) and reads the batch until it is done."""
    from accounts.services import issue_token

    team = Team.objects.create(name="Procurement", slug="procurement")
    Membership.objects.create(user=user, team=team)
    _, token = issue_token(user, name="quoting system")
    out = tmp_path / "comparison.xlsx"
    run = _run(live_server, token, out)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Vendor A: 192 cards" in run.stdout and "(price book procurement/vendor-a@1)" in run.stdout
    ws = load_workbook(io.BytesIO(out.read_bytes())).active
    assert [c.value for c in ws[1]] == ["Item", "Vendor A", "Vendor B", "Vendor C"]
    rows = {row[0]: row[1:] for row in ws.iter_rows(min_row=2, values_only=True)}
    assert rows["Accelerator"] == ("NVIDIA H100 SXM5 80GB", "NVIDIA H100 SXM5 80GB", "Huawei Ascend 910B2")
    # A and B quote the same 24 DGX H100 servers, 12 switches and 896 transceivers (the 192 cards'
    # rail-optimized leaf-spine). Their books: a server is chassis + 8 cards, A 110,000 + 8 x 25,000 =
    # 310,000 and B 101,000 + 8 x 23,000 = 285,000 (25,000 less); switches 25,000 and 28,000;
    # transceivers 900 and 1,100. B's cluster costs 24*25,000 - 12*3,000 - 896*200 = 384,800 less.
    a, b, _c = rows["Cluster cost"]
    assert a - b == 24 * 25_000 - 12 * 3_000 - 896 * 200
    batch = Batch.objects.get()
    assert batch.owner == user and batch.name == "RFQ: 70B, 500B tokens, 30 days"
    assert IdempotencyRecord.objects.filter(path="/api/v1/estimates/batch", status_code=202).count() == 1
    # the books belong to the team, and so do the quotes, each with the version it was planned with
    assert sorted(PriceBook.objects.filter(team=team).values_list("slug", flat=True)) == [
        "vendor-a",
        "vendor-b",
        "vendor-c",
    ]
    assert {(e.team_id, e.price_book_version.number) for e in Estimate.objects.all()} == {(team.pk, 1)}

    # a second run with unchanged price lists files no new version
    assert _run(live_server, token, out).returncode == 0
    assert {b.versions.count() for b in PriceBook.objects.all()} == {1}
