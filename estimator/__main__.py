"""CLI: python -m estimator {plan, diagnose, schema, catalog, validate}.

Bad input exits 2 with one line on stderr (`error: field: sentence`, `; ` between fields) and no
traceback.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

# The CLI uses no pydantic plugin; looking for them scans every installed distribution's metadata
# (importlib.metadata) when the first model is built, a tenth of a cold start. Run as `python -m
# estimator`, the loader itself is not imported either (estimator.cold_start.skip_plugin_discovery).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
# The CLI calls no BLAS routine (the core's arrays are elementwise). numpy's OpenBLAS starts one
# thread per core when numpy is imported, and the idle ones spin before they sleep: CPU a plan never
# uses, taken from the one thread that works on a shared machine (numpy/numpy#29193). Set before
# numpy is first imported; a caller's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from estimator.cold_start import DataclassCode, skip_plugin_discovery
from estimator.errors import ScenarioError
from estimator.jsonio import loads_strict, to_jsonable

EXIT_BAD_INPUT = 2


# Run as `python -m estimator` the process does one command and ends: the cyclic collector is
# paused while the command's modules are imported (classes, functions, the catalog: objects that
# live until the process ends), then they are moved out of its sight (gc.freeze) and it runs
# again, so no collection walks them: the pattern the gc module's documentation gives for
# long-lived start-up objects (disable early, freeze, enable). main(argv) called in-process (the
# tests) leaves the collector alone.
_GC_PAUSED = False


def _pause_gc() -> None:
    global _GC_PAUSED
    if gc.isenabled():
        gc.disable()
        _GC_PAUSED = True


def _imports_done() -> None:
    """A command's modules are in: freeze what they made and let the collector run again, if
    _pause_gc paused it."""
    global _GC_PAUSED
    if _GC_PAUSED:
        _GC_PAUSED = False
        gc.freeze()
        gc.enable()


def _read(path: str, what: str = "scenario", field: str = "") -> Any:
    if path == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(f"cannot read {what} file {path!r}: {exc.strerror}", field) from None
        except UnicodeDecodeError:
            raise ScenarioError(f"{what} file {path!r} is not UTF-8 text", field) from None
    return loads_strict(text)


def _books(data: Any, path: str | None) -> dict[str, Any] | None:
    """--price-book FILE: one book document (estimator.contract.price_book.PriceBook) that stands for the
    reference the scenario's cost.price_book names, whatever it is."""
    if path is None:
        return None
    from estimator.contract.price_book import parse_book

    ref = data.get("cost", {}).get("price_book") if isinstance(data, dict) else None
    if not isinstance(ref, str):
        raise ScenarioError("--price-book was given but the scenario names no price book", "cost.price_book")
    return {ref: parse_book(_read(path, "price book", "--price-book"), "--price-book")}


def _print_json(data: Any) -> None:
    """Serialize first, then write: a value that cannot be written leaves stdout empty, never
    half a document."""
    text = json.dumps(to_jsonable(data), indent=2, ensure_ascii=False, allow_nan=False)
    text.encode(sys.stdout.encoding or "utf-8")  # UnicodeEncodeError here, before any output
    sys.stdout.write(text + "\n")


def cmd_plan(args: argparse.Namespace) -> int:
    from estimator.plan.compose import estimate
    from estimator.plan.work_budget import check_work_budget

    _imports_done()
    data = _read(args.scenario)
    books = _books(data, args.price_book)
    check_work_budget(data, books)  # estimator.limits: refused before any search runs
    out = estimate(data, books)
    if args.format == "table":
        from estimator.report_text import format_plan  # the table only

        text = format_plan(out)
        text.encode(sys.stdout.encoding or "utf-8")
        sys.stdout.write(text)
    else:
        _print_json(out)
    return 0


def cmd_diagnose(args: argparse.Namespace) -> int:
    from estimator.plan.diagnose import diagnose, run_document
    from estimator.plan.work_budget import check_work_budget
    from estimator.report_text import format_diagnosis

    _imports_done()
    data = _read(args.run, "run")
    books = _books(data, args.price_book)
    if isinstance(data, dict):
        check_work_budget(run_document(data), books)  # estimator.limits, as for a plan
    out = diagnose(data, books)
    if args.format == "table":
        sys.stdout.write(format_diagnosis(out))
    else:
        _print_json(out)
    return 0


def cmd_schema(_args: argparse.Namespace) -> int:
    from estimator.contract.scenario import scenario_json_schema

    _imports_done()
    _print_json(scenario_json_schema())
    return 0


def cmd_catalog(args: argparse.Namespace) -> int:
    from estimator import catalog
    from estimator.report_text import format_catalog

    _imports_done()
    listing = catalog.catalog_listing()
    if args.kind:
        if args.kind not in listing:
            raise ScenarioError(
                f"unknown catalog kind {args.kind!r}; known: {', '.join(sorted(listing))}", "kind"
            )
        listing = {args.kind: listing[args.kind]}
    if args.format == "json":
        _print_json(listing)
    else:
        sys.stdout.write(format_catalog(listing))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from estimator.report_text import format_holdout, format_validation
    from estimator.validation import validation_rows

    _imports_done()
    if args.pilot_holdout:  # calibration.pilot's held-out check (estimator.validation.pilot_holdout)
        from estimator.validation.pilot_holdout import holdout_table

        table = holdout_table()
        if args.format == "json":
            _print_json(table)
        else:
            sys.stdout.write(format_holdout(table))
        return 0
    rows = validation_rows()
    if args.format == "json":
        _print_json(rows)
    else:
        sys.stdout.write(format_validation(rows))
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors in one line (argparse prints the usage block first), exit 2
    as for any bad input; the subcommands' parsers are of this class too (add_subparsers)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message} (python -m estimator --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m estimator", description="ClusterPlan estimator")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan", help="plan one scenario (JSON file or - for stdin)")
    p.add_argument("scenario")
    p.add_argument("--format", choices=["json", "table"], default="json")
    p.add_argument(
        "--price-book",
        metavar="FILE",
        help="a price book JSON file (name, version, currency, price_date, prices) for the "
        "scenario's cost.price_book; without it such a scenario exits 2",
    )
    p.set_defaults(func=cmd_plan)
    d = sub.add_parser("diagnose", help="a measured run (scenario + measured) against the model's breakdown")
    d.add_argument("run")
    d.add_argument("--format", choices=["json", "table"], default="table")
    d.add_argument("--price-book", metavar="FILE", help="as for plan")
    d.set_defaults(func=cmd_diagnose)
    s = sub.add_parser("schema", help="print the JSON Schema of the scenario input")
    s.set_defaults(func=cmd_schema)
    c = sub.add_parser("catalog", help="list the catalog")
    c.add_argument(
        "kind", nargs="?", help="accelerators, servers, switches, transceivers, drives, presets, defaults"
    )
    c.add_argument("--format", choices=["json", "table"], default="table")
    c.set_defaults(func=cmd_catalog)
    v = sub.add_parser("validate", help="predicted against published figures")
    v.add_argument("--format", choices=["json", "table"], default="table")
    v.add_argument(
        "--pilot-holdout",
        action="store_true",
        help="calibrate on the smallest run of each published family and predict its larger runs",
    )
    v.set_defaults(func=cmd_validate)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except ScenarioError as exc:  # one line, however many fields are wrong (a shell reads one)
        text = "; ".join(f"{err.field or '(scenario)'}: {err.message}" for err in exc.errors)
        sys.stderr.write("error: " + " ".join(text.split()) + "\n")
        return EXIT_BAD_INPUT
    except RecursionError:
        sys.stderr.write("error: (scenario): nested too deeply\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # an engine bug, not bad input: one line, no traceback unless asked
        if os.environ.get("ESTIMATOR_DEBUG"):
            raise
        sys.stderr.write(
            f"internal error: {type(exc).__name__}: {exc} (set ESTIMATOR_DEBUG=1 for a traceback)\n"
        )
        return 1


if __name__ == "__main__":
    _pause_gc()
    # one command and its end: no plugin search, dataclasses' methods compiled once per install
    skip_plugin_discovery()
    _code = DataclassCode()
    _code.install()
    try:
        _exit = main()
    finally:
        _code.uninstall()
    sys.exit(_exit)
