"""docs/procurement.md's worked example, executed: from a fresh install (a user and a token, no
team), the script creates the team, files each vendor's price list as a price book, posts a batch
of quotes that name them to a live server, follows the comparison link and downloads the Excel file.
Its output is the sample the page shows: the test fails when they diverge, and
PROCUREMENT_DOC_UPDATE=1 writes the output into the page (after an intended change of results)."""

import io
import os
import re
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
DOC = ROOT / "docs" / "procurement.md"
DOC_BASE = "http://127.0.0.1:8000"  # the address the page's command uses
# the sample: the first plain ``` block after the command block of #example
SAMPLE = re.compile(r"(--team procurement --out comparison\.xlsx\n```\n\n```\n)(.*?)(```\n)", re.S)

pytestmark = pytest.mark.django_db(transaction=True)


def _run(live_server, token: str, out: Path) -> subprocess.CompletedProcess:
    args = ["--base-url", live_server.url, "--token", token, "--team", "procurement", "--out", out.name]
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=out.parent,
        env={"PATH": "/usr/bin:/bin"},  # the standard library only: no project on the path
    )


def as_in_the_doc(stdout: str, live_server) -> str:
    """The script's output with the two things that differ from run to run put as the page has
    them: the server's address and the batch's share token."""
    text = stdout.replace(live_server.url, DOC_BASE)
    return re.sub(r"/batches/[A-Za-z0-9_-]{20,}/", "/batches/<token>/", text)


def test_the_worked_example_runs_from_a_fresh_install_and_prints_the_documented_sample(
    live_server, user, tmp_path, eager_celery
):
    from accounts.services import issue_token

    assert not Team.objects.exists()  # a fresh install: the script makes the team
    _, token = issue_token(user=user, name="quoting system")
    out = tmp_path / "comparison.xlsx"
    run = _run(live_server, token, out)
    assert run.returncode == 0, run.stdout + run.stderr
    printed = as_in_the_doc(run.stdout, live_server)
    doc = DOC.read_text(encoding="utf-8")
    sample = SAMPLE.search(doc)
    assert sample is not None, "docs/procurement.md lost its sample block"
    if os.environ.get("PROCUREMENT_DOC_UPDATE") == "1":
        DOC.write_text(doc[: sample.start(2)] + printed + doc[sample.end(2) :], encoding="utf-8")
    else:
        assert printed == sample.group(2), (
            "docs/procurement.md's sample differs from the run (see the docstring)"
        )

    team = Team.objects.get(slug="procurement")
    assert Membership.objects.get(team=team).user == user  # its creator, as admin
    ws = load_workbook(io.BytesIO(out.read_bytes())).active
    assert [c.value for c in ws[1]] == ["Item", "Unit", "Vendor A (USD)", "Vendor B (USD)", "Vendor C (USD)"]
    rows = {row[0]: row[2:] for row in ws.iter_rows(min_row=2, values_only=True)}
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
