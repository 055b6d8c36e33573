"""A msgid with a bare percent sign ("80% likely from") is marked `xgettext:no-python-format` where
it is written, where xgettext would read a printf directive in it: otherwise makemessages flags it python-format, merges the catalogue's translation as
fuzzy, and compilemessages then drops it (the Chinese page shows English)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CALL = re.compile(r'\b(?:_|gettext|gettext_lazy|gettext_noop)\(\s*"((?:[^"\\]|\\.)*)"')
# a % that reads as a printf directive to xgettext ("80% likely": "% li"; "95% of": "% o"), so the
# string is flagged python-format; "25%" at the end or "50% MFU" read as none
BARE = re.compile(r"%[ #0+-]*\d*(?:\.\d+)?[hlL]?[diouxXeEfFgGcrsa]")


def test_a_bare_percent_sign_is_flagged_no_python_format():
    missing = []
    for app in ("reports", "sweeps", "teams", "accounts", "integrations", "pricebooks", "diagnosis", "api"):
        for path in (ROOT / app).rglob("*.py"):
            lines = path.read_text(encoding="utf-8").splitlines()
            for i, line in enumerate(lines):
                for text in CALL.findall(line):
                    if "%(" not in text and "%%" not in text and BARE.search(text):
                        above = lines[i - 1] if i else ""
                        if "xgettext:no-python-format" not in above:
                            missing.append(f"{path.relative_to(ROOT)}:{i + 1}: {text}")
    assert missing == []
