"""`python -m tests.golden [--update]`: check (default) or regenerate the golden results.

Exit status: 0 when the stored results match (or were updated), 1 when they differ (check mode),
2 when an update is refused (figures moved without an ENGINE_VERSION bump or CHANGELOG entry).
"""

from __future__ import annotations

import argparse
import json
import sys

from estimator import ENGINE_VERSION

from . import RESULTS, VERSIONS, changelog_versions, compute, digest, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__)
    parser.add_argument("--update", action="store_true", help="rewrite results.json (and versions.json)")
    args = parser.parse_args(argv)
    now = compute()
    new = digest(now)
    stored = load(RESULTS) if RESULTS.exists() else {}
    versions: dict[str, str] = load(VERSIONS) if VERSIONS.exists() else {}
    if not args.update:
        moved = sorted(name for name in now if stored.get(name) != now[name])
        for name in moved:
            print(f"moved: {name}")
        return 1 if moved else 0
    if new == digest(stored) and versions.get(ENGINE_VERSION) == new:
        print(f"golden results unchanged (engine {ENGINE_VERSION}, digest {new})")
        return 0
    recorded = versions.get(ENGINE_VERSION)
    if recorded is not None and recorded != new:
        print(
            f"refused: the results moved but ENGINE_VERSION is still {ENGINE_VERSION}; bump it in "
            "estimator/__init__.py and add a CHANGELOG.md entry",
            file=sys.stderr,
        )
        return 2
    if ENGINE_VERSION not in changelog_versions():
        print(f"refused: CHANGELOG.md has no '## {ENGINE_VERSION}' entry", file=sys.stderr)
        return 2
    RESULTS.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    versions[ENGINE_VERSION] = new
    VERSIONS.write_text(json.dumps(versions, indent=1) + "\n", encoding="utf-8")
    print(f"golden results written for engine {ENGINE_VERSION} (digest {new})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
