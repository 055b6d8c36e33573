"""Counts in the core's English defaults: "1 card", "1,024 cards" (the web layer words them in the
reader's language with ngettext, reports.messages)."""

from __future__ import annotations


def counted(n: float, noun: str, plural: str | None = None) -> str:
    """`n` and its noun, singular for exactly one: counted(1, "card") -> "1 card",
    counted(2048, "card") -> "2,048 cards", counted(1.5, "day") -> "1.5 days"."""
    shown = f"{int(n):,}" if float(n).is_integer() else f"{n:g}"
    return f"{shown} {noun if n == 1 else (plural or noun + 's')}"
