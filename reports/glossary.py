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
    "ETTR": gettext_lazy(
        "Effective training time ratio: the share of the wall-clock time that trains for good, not lost "
        "to checkpoints, re-done work, restarts and maintenance."
    ),
}


# Acronyms and unit symbols the pages show in every language: (as listed, meaning, the words it
# allows). tests/web/test_zh_words_browser.py allows exactly these words (and names) on Chinese pages.
MORE = [
    (
        "CP",
        gettext_lazy("Context parallel: one sequence split across cards, attention passed round a ring."),
        ("CP",),
    ),
    ("BF16, FP8, FP16, FP32", gettext_lazy("Number formats of 16, 8, 16 and 32 bits."), ("BF", "FP")),
    (
        "HCCS, NVLink, UB",
        gettext_lazy("The fast links between the cards of one server (HCCS, NVLink) or supernode (UB)."),
        ("HCCS", "NVLink", "UB"),
    ),
    ("RoCE, IB", gettext_lazy("RoCE and InfiniBand (IB): the network between servers."), ("RoCE", "IB")),
    (
        "NIC",
        gettext_lazy("Network interface card: a server's port to the network between servers."),
        ("NIC",),
    ),
    ("VPC", gettext_lazy("The supernode's switches towards the data centre network."), ("VPC",)),
    (
        "HCCL, NCCL, CANN",
        gettext_lazy("Collective-communication libraries of Ascend (HCCL, in CANN) and NVIDIA (NCCL) cards."),
        ("HCCL", "NCCL", "CANN"),
    ),
    ("HFU", gettext_lazy("Hardware FLOPs utilisation: like MFU, with recomputation counted."), ("HFU",)),
    ("GEMM", gettext_lazy("A matrix multiplication, most of a transformer's arithmetic."), ("GEMM",)),
    (
        "ECMP, PFC",
        gettext_lazy(
            "Equal-cost multi-path routing (flows spread over parallel links) and priority flow control "
            "(the pause frames that make RoCE lossless)."
        ),
        ("ECMP", "PFC"),
    ),
    (
        "NUMA",
        gettext_lazy(
            "Non-uniform memory access: a server's CPUs and memory in sockets; a process far from its "
            "card's socket runs slower."
        ),
        ("NUMA",),
    ),
    (
        "KV",
        gettext_lazy(
            "Keys and values of attention: with grouped-query attention a model has fewer KV heads than "
            "attention heads."
        ),
        ("KV",),
    ),
    ("MoE", gettext_lazy("Mixture of experts: each token uses a few of many expert MLPs."), ("MoE", "MLP")),
    ("token", gettext_lazy("The unit of text a model reads: a word or part of a word."), ("token", "tokens")),
    (
        "all-reduce, all-to-all, all-gather",
        gettext_lazy("Collective operations: every card sums, exchanges or gathers data with the others."),
        ("all", "to", "reduce", "gather", "scatter"),  # the operations' names
    ),
    (
        "1F1B",
        gettext_lazy(
            "One forward, one backward: the pipeline schedule that alternates micro-batches' passes."
        ),
        ("F1B",),
    ),
    ("Clos", gettext_lazy("A switch network of leaf and spine tiers (Charles Clos, 1953)."), ("Clos",)),
    ("IT", gettext_lazy("IT load: the power of the servers, network and storage, before cooling."), ("IT",)),
    ("TDP", gettext_lazy("Thermal design power: the most a card draws under load."), ("TDP",)),
    ("CSV, JSON, Excel, PDF", gettext_lazy("Download formats."), ("CSV", "JSON", "Excel", "xlsx", "PDF")),
    ("UTC", gettext_lazy("Coordinated universal time."), ("UTC",)),
    ("API", gettext_lazy("The REST interface for scripts and quoting systems."), ("API", "REST")),
    (
        "B, W, Wh, FLOP, k, M, G, T, P, E",
        gettext_lazy(
            "Units: bytes, watts, watt-hours, operations; prefixes 10³, 10⁶, 10⁹, 10¹², 10¹⁵, 10¹⁸."
        ),
        (
            *(
                f"{p}{unit}"
                for p in ("", "k", "M", "G", "T", "P", "E")
                for unit in ("B", "W", "Wh", "bit", "FLOP")
            ),
            *("FLOPs", "ms", "min", "Gb", "GiB", "MiB", "kWh", "CNY", "USD"),
        ),
    ),
]
ACRONYMS = frozenset(
    [term for term in TERMS if term.isupper() or term == "ZeRO"]
    + [w for _t, _d, words in MORE for w in words]
)


# How a term that is a word, not an acronym, is listed in the reader's language
WORDS = {"Oversubscription": gettext_lazy("Oversubscription"), "Capex": gettext_lazy("Capex")}


def items() -> list[tuple[str, str, str]]:
    """The glossary: (term, as listed, meaning) for the report's jargon, then the acronyms and units."""
    return [(term, str(WORDS.get(term, term)), str(text)) for term, text in TERMS.items()] + [
        (term, term, str(text)) for term, text, _w in MORE
    ]


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
