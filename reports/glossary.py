"""Plain-language definitions of the report's jargon, shown as tooltips and in a glossary."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as L

TERMS = {
    "MFU": L(
        "Model FLOPs utilisation: the share of the cards' peak arithmetic spent on the model's own "
        "computation. 40-55% is good at scale."
    ),
    "TP": L("Tensor parallel: each layer split across cards inside one server (fast links)."),
    "PP": L("Pipeline parallel: consecutive layers on different servers, passing activations along."),
    "DP": L("Data parallel: copies of the model that train on different data and average gradients."),
    "EP": L("Expert parallel: the experts of a mixture-of-experts model spread across cards."),
    "ZeRO": L(
        "Zero Redundancy Optimizer: shards optimizer state (stage 1), gradients (2) and weights (3) "
        "across data-parallel copies to save memory."
    ),
    "HBM": L("High-bandwidth memory: the memory on each accelerator card; the model's working set must fit."),
    "PUE": L("Power usage effectiveness: facility power divided by IT power (cooling and losses on top)."),
    "Oversubscription": L(
        "Oversubscription: ports towards servers per port towards the spine; above 1:1 the network "
        "slows when all servers talk at once."
    ),
    "Capex": L("Capital expenditure: the price of buying the cluster (servers, network, storage)."),
}


def items() -> list[tuple[str, str]]:
    return [(term, str(text)) for term, text in TERMS.items()]
