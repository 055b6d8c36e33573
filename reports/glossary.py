"""Plain-language definitions of the report's jargon, shown as tooltips and in a glossary."""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.translation import gettext_lazy

TERMS = {
    "MFU": gettext_lazy(
        "Model FLOPs utilisation: the share of the cards' peak arithmetic spent on the model's own "
        "computation. Good large-scale runs reach 40 to 55 percent."
    ),
    "TP": gettext_lazy("Tensor parallel: each layer split across cards inside one server (fast links)."),
    "PP": gettext_lazy(
        "Pipeline parallel: consecutive layers on different servers, passing activations along."
    ),
    "DP": gettext_lazy(
        "Data parallel: copies of the model that train on different data and average gradients."
    ),
    "EP": gettext_lazy("Expert parallel: the experts of a mixture-of-experts model spread across cards."),
    "ZeRO": gettext_lazy(
        "Zero Redundancy Optimizer: shards optimizer state (stage 1), gradients (2) and weights (3) "
        "across data-parallel copies to save memory."
    ),
    "HBM": gettext_lazy(
        "High-bandwidth memory: the memory on each accelerator card; the model's working set must fit."
    ),
    "PUE": gettext_lazy(
        "Power usage effectiveness: facility power divided by IT power (cooling and losses on top)."
    ),
    "Oversubscription": gettext_lazy(
        "Oversubscription: ports towards servers per port towards the spine; above 1:1 the network "
        "slows when all servers talk at once."
    ),
    "Capex": gettext_lazy(
        "Capital expenditure: the price of buying the cluster (servers, network, storage)."
    ),
}


def items() -> list[tuple[str, str]]:
    return [(term, str(text)) for term, text in TERMS.items()]


# words in a label that get the glossary's tooltip (both languages' spellings)
ALIASES = {
    "MFU": "MFU",
    "TP": "TP",
    "PP": "PP",
    "DP": "DP",
    "EP": "EP",
    "ZeRO": "ZeRO",
    "HBM": "HBM",
    "PUE": "PUE",
    "Oversubscription": "Oversubscription",
    "oversubscription": "Oversubscription",
    "收敛比": "Oversubscription",
    "capex": "Capex",
    "资本支出": "Capex",
}
_WORD = re.compile(
    r"(?<![A-Za-z])(" + "|".join(sorted(map(re.escape, ALIASES), key=len, reverse=True)) + r")(?![A-Za-z])"
)


def gloss(text: str) -> str:
    """HTML of `text` (escaped) with each glossary word wrapped in an <abbr> tooltip."""
    escaped = str(escape(text))
    return _WORD.sub(
        lambda m: (
            f'<abbr class="term" title="{escape(str(TERMS[ALIASES[m.group(1)]]))}" tabindex="0">{m.group(1)}</abbr>'
        ),
        escaped,
    )
