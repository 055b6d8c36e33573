"""Every citation in the code points into the repository: `docs/<file>.md#<anchor>` must exist, and
nothing cites the design notes or reference folders that live outside it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = (
    "estimator",
    "api",
    "reports",
    "sweeps",
    "teams",
    "pricebooks",
    "accounts",
    "integrations",
    "config",
    "tests",
    "bench",
    "scripts",
    "docs",
)
CITATION = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?((?:, #[\w-]+)*)")
# The old design notes and the reference folder outside the repository, spelled in parts so that
# this checker is not itself a citation of them.
OUTSIDE = re.compile(
    "|".join(("design" + r"\.md", "shar" + r"ed/(?:seed|reference)", r"reference/[\w_]+\.md"))
)


def _sources() -> dict[str, str]:
    out = {}
    for tree in TREES:
        for pattern in ("*.py", "*.toml"):  # the catalog and the published runs cite sources too
            for path in (ROOT / tree).rglob(pattern):
                if "migrations" not in path.parts:
                    out[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return out


def _anchors(doc: str) -> set[str]:
    return set(re.findall(r'<a id="([\w-]+)"></a>', (ROOT / "docs" / doc).read_text(encoding="utf-8")))


def test_every_docs_citation_resolves():
    broken = []
    for name, text in _sources().items():
        for doc, anchor, more in CITATION.findall(text):  # a citation "#a, #b" names anchors a and b
            if name.endswith(".toml") and doc != "sources.md":
                continue  # data files also name other projects' docs/*.md; ours are cited as docs/sources.md#
            anchors = [anchor, *re.findall(r"#([\w-]+)", more)] if anchor else []
            if not (ROOT / "docs" / doc).exists():
                broken.append(f"{name}: docs/{doc}")
            else:
                broken += [f"{name}: docs/{doc}#{a}" for a in anchors if a not in _anchors(doc)]
    assert broken == []


def test_citations_are_checked():
    cited = {m[:2] for text in _sources().values() for m in CITATION.findall(text)}
    assert ("sources.md", "zero") in cited and ("architecture.md", "scenario-contract") in cited


def test_nothing_cites_material_outside_the_repository():
    this = Path(__file__).relative_to(ROOT).as_posix()
    offenders = sorted(name for name, text in _sources().items() if name != this and OUTSIDE.search(text))
    assert offenders == []


def test_every_readme_screenshot_is_one_a_browser_test_writes():
    # a picture no test rewrites goes stale (docs/screenshot.png showed engine 1.0.0's report)
    shown = set(re.findall(r"\]\((docs/[\w/.-]+\.png)\)", (ROOT / "README.md").read_text(encoding="utf-8")))
    assert shown, "the README shows no screenshot"
    writers = "\n".join(
        path.read_text(encoding="utf-8")
        for path in [
            *(ROOT / "tests" / "web").glob("test_*browser.py"),
            ROOT / "tests/sweeps/test_embedded.py",
        ]
    )
    written = set(re.findall(r'["/]([\w-]+)(?:\.png)?"', writers))
    for path in shown:
        assert path.startswith("docs/screenshots/"), path
        assert Path(path).stem in written, path
