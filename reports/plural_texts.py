"""The sentences of the message catalogue that count something (reports.messages renders them): code
-> (the counted param, the sentence in its singular and plural forms, marked for ngettext;
translations in locale/*/LC_MESSAGES/django.po). The other sentences are reports.message_texts."""

from __future__ import annotations

from typing import Any

from django.utils.translation import ngettext_lazy

# Sentences that count something: code -> (the counted param, the sentence in its singular and
# plural forms); render chooses the form with ngettext by the count as shown (zh_Hans has one form).
PLURALS: dict[str, tuple[str, Any]] = {
    "run-never-finishes": (
        "cards",
        ngettext_lazy(
            "The run never finishes: %(cards)s card meets an interruption every %(every_s)s and each interruption "
            "costs %(cost_s)s. Use fewer cards, faster restarts (reliability.detection_s, rescheduling_s) or "
            "asynchronous checkpoints.",
            "The run never finishes: %(cards)s cards meet an interruption every %(every_s)s and each interruption "
            "costs %(cost_s)s. Use fewer cards, faster restarts (reliability.detection_s, rescheduling_s) or "
            "asynchronous checkpoints.",
            "n",
        ),
    ),
    "no-feasible-layout": (
        "cards",
        ngettext_lazy(
            "No parallel layout fits in HBM on %(cards)s card. Add cards, use a larger-memory accelerator or a shorter sequence.",
            "No parallel layout fits in HBM on %(cards)s cards. Add cards, use a larger-memory accelerator or a shorter sequence.",
            "n",
        ),
    ),
    # estimator.plan.count_curve: a count of the cards chart the engine cannot plan (its hover)
    "count-no-layout": (
        "cards",
        ngettext_lazy(
            "%(cards)s card: no plan, no parallel layout fits in HBM",
            "%(cards)s cards: no plan, no parallel layout fits in HBM",
            "n",
        ),
    ),
    "count-no-fabric": (
        "cards",
        ngettext_lazy(
            "%(cards)s card: no plan, the network cannot connect that many (larger switches can)",
            "%(cards)s cards: no plan, the network cannot connect that many (larger switches can)",
            "n",
        ),
    ),
    "count-never-finishes": (
        "cards",
        ngettext_lazy(
            "%(cards)s card: no plan, the run never finishes (interruptions cost more than the time between them)",
            "%(cards)s cards: no plan, the run never finishes (interruptions cost more than the time between them)",
            "n",
        ),
    ),
    "count-not-planned": (
        "cards",
        ngettext_lazy(
            "%(cards)s card: no plan, the fixed layout does not divide the cards",
            "%(cards)s cards: no plan, the fixed layout does not divide the cards",
            "n",
        ),
    ),
    "count-over-work-budget": (
        "cards",
        ngettext_lazy(
            "%(cards)s card: not planned, more parallel layouts to search than a plan may (%(limit)s)",
            "%(cards)s cards: not planned, more parallel layouts to search than a plan may (%(limit)s)",
            "n",
        ),
    ),
    "cards-split-into-no-layout": (
        "cards",
        ngettext_lazy(
            "No parallel layout splits %(cards)s card: %(reasons)s. The nearest round cluster sizes that hold one: %(below)s and %(above)s cards.",
            "No parallel layout splits %(cards)s cards: %(reasons)s. The nearest round cluster sizes that hold one: %(below)s and %(above)s cards.",
            "n",
        ),
    ),
    "budget-cards-hold-no-layout": (
        "cards",
        ngettext_lazy(
            "No parallel layout fits in HBM on the %(cards)s card the budget buys. Raise the budget, use a larger-memory accelerator or a shorter sequence.",
            "No parallel layout fits in HBM on the %(cards)s cards the budget buys. Raise the budget, use a larger-memory accelerator or a shorter sequence.",
            "n",
        ),
    ),
    "no-possible-layout": (
        "cards",
        ngettext_lazy(
            "No parallel layout is possible on %(cards)s card with the fixed fields (%(fixed)s): %(reasons)s. Nearest accepted layouts: %(suggestions)s.",
            "No parallel layout is possible on %(cards)s cards with the fixed fields (%(fixed)s): %(reasons)s. Nearest accepted layouts: %(suggestions)s.",
            "n",
        ),
    ),
    "budget-buys-no-cluster": (
        "cards",
        ngettext_lazy(
            "The budget of %(budget)s does not buy the smallest cluster: %(cards)s card for %(capex)s.",
            "The budget of %(budget)s does not buy the smallest cluster: %(cards)s cards for %(capex)s.",
            "n",
        ),
    ),
    "config-missing-fields": (
        "count",
        ngettext_lazy(
            "model config is missing the required field %(fields)s",
            "model config is missing the required fields %(fields)s",
            "n",
        ),
    ),
    "config-fields-ignored": (
        "count",
        ngettext_lazy(
            "%(count)s config.json field the estimator does not read was ignored: %(fields)s.",
            "%(count)s config.json fields the estimator does not read were ignored: %(fields)s.",
            "n",
        ),
    ),
}
