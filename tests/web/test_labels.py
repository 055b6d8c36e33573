"""Issue 24 item 1: every key the core can emit has a label (reports.labels) or a sentence
(reports.messages.MESSAGES), and each has a zh-Hans translation in the committed catalogue.

The keys come from the core's own registries (BREAKDOWN_KEYS, COMPUTE_TERMS, MemoryBreakdown's
fields, capex_usd's parts, starting_config.SETTINGS, RECOMPUTE_CODES, the scenario model's fields,
advice.RULES, the sweep's RANK_METRICS), from the code literals of the core's plan modules (every
"code" written into a result), and from plans of varied scenarios (the codes built at run time)."""

import ast
import dataclasses
import re
import typing
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.utils import translation

from estimator.catalog.failures import CAUSES
from estimator.contract.scenario import Scenario
from estimator.layout.memory import RECOMPUTE_CODES, MemoryBreakdown
from estimator.layout.stack_profile import CHECKPOINT_MODES
from estimator.layout.steptime.step import BREAKDOWN_KEYS, COMPUTE_TERMS
from estimator.money.cost import CapexBill, capex_usd
from estimator.plan import advice, diagnose, goodput, starting_config
from estimator.plan.compose import estimate
from reports import labels, messages
from sweeps import digests

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def zh() -> dict[str, str]:
    with (ROOT / "locale/zh_Hans/LC_MESSAGES/django.po").open("rb") as fh:
        catalog = read_po(fh)
    out: dict[str, str] = {}
    for m in catalog:  # a plural entry (ngettext) stands for its singular and its plural msgid
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        text = m.string[0] if isinstance(m.string, tuple) else m.string
        if ids[0] and text:
            out.update(dict.fromkeys(ids, text))
    return out


def _untranslated(table: dict, zh: dict[str, str]) -> list[str]:
    """Keys whose label has no Chinese translation (an acronym-only label like "BF16" needs none)."""
    out = []
    for key, label in table.items():
        with translation.override("en"):
            text = str(label)
        if re.fullmatch(r"[A-Z0-9 ]+", text):
            continue
        if not CJK.search(zh.get(text, "")):
            out.append(key)
    return out


def scenario_fields(model=Scenario, prefix: str = "") -> list[str]:
    """Every leaf field of the scenario contract, dotted (the fields a sweep can vary)."""
    out = []
    for name, field in model.model_fields.items():
        nested = [
            a for a in (field.annotation, *typing.get_args(field.annotation)) if hasattr(a, "model_fields")
        ]
        if nested and name != "accelerator":  # an accelerator is an id or an inline object: one axis
            for sub in nested:
                out += scenario_fields(sub, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


REGISTRIES = {
    "step terms": (labels.STEP_TERMS, set(BREAKDOWN_KEYS) | set(COMPUTE_TERMS)),
    "memory terms": (labels.MEMORY_TERMS, {f.name for f in dataclasses.fields(MemoryBreakdown)} - {"total"}),
    "capex parts": (labels.CAPEX_PARTS, set(capex_usd(CapexBill(0, 0))) - {"total"}),
    "settings": (labels.SETTINGS, set(starting_config.TRAINING_SETTINGS)),
    "setting values": (labels.SETTING_VALUES, set(RECOMPUTE_CODES)),
    "sweep axes": (labels.AXES, set(scenario_fields()) - set(labels.NOT_AXES)),
    "sweep metrics": (labels.METRICS, set(digests.RANK_METRICS)),
    "diagnosis terms": (labels.DIAGNOSIS_TERMS, set(diagnose.TERMS)),
    "goodput levers": (labels.GOODPUT_LEVERS, set(goodput.LEVER_NAMES)),
    "checkpoint modes": (labels.CHECKPOINT_MODES, set(CHECKPOINT_MODES)),
    "failure causes": (labels.FAILURE_CAUSES, set(CAUSES)),
}


@pytest.mark.parametrize("name", REGISTRIES)
def test_every_key_of_the_core_has_a_label_in_both_languages(name, zh):
    table, keys = REGISTRIES[name]
    assert keys, name  # the registry is not empty
    assert sorted(keys - set(table)) == [], f"{name} without a label"
    assert _untranslated({k: table[k] for k in keys}, zh) == [], f"{name} without a zh-Hans label"


def test_every_chip_family_has_its_name():
    from estimator.catalog.entries import CHIP_FAMILIES

    assert set(CHIP_FAMILIES) <= set(labels.CHIP_FAMILIES)


def test_environment_settings_keep_the_name_one_types():
    assert set(starting_config.ENVIRONMENT_SETTINGS).isdisjoint(labels.SETTINGS)
    assert labels.setting("HCCL_BUFFSIZE") == "HCCL_BUFFSIZE"


def _string(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literal_codes() -> set[str]:
    """Every string literal the core's plan modules write as a code: {"code": "..."}, _advice("..."),
    AdviceItem(code="...", message_code="...")."""
    out: set[str | None] = set()
    for path in [*(ROOT / "estimator/plan").glob("*.py"), ROOT / "estimator/contract/price_book.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                out |= {
                    _string(v)
                    for k, v in zip(node.keys, node.values, strict=True)
                    if _string(k) in ("code", "message_code", "suggestion_code")
                }
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_advice" and node.args:
                out.add(_string(node.args[0]))
            if isinstance(node, ast.keyword) and node.arg in (
                "code",
                "message_code",
                "suggestion_code",
                "value_code",
            ):
                out.add(_string(node.value))
    return {c for c in out if c}


PLANS = [
    {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"target_days": 30},
        "cost": {"budget": 1e6},
    },
    {
        "model": {"preset": "deepseek-v3"},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"cards": 2304},
    },
    {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e12, "precision": "fp8"},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 64},
        "parallelism": {"tp": 4, "ep": 8},
        "network": {"oversubscription": 3},
    },
    {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "precision": "fp32"},
        "hardware": {"accelerator": "a100-sxm-80gb"},
        "cluster": {"cards": 64},
        "efficiency": {"mfu": 0.8},
    },
]


def _emitted(result: dict) -> set[str]:
    out = set()
    for item in result.get("warnings", []) + result.get("advice", []):
        out |= {item.get("code"), item.get("message_code"), item.get("suggestion_code")}
    for row in result.get("starting_configuration", []) + result.get("assumptions", []):
        out |= {row.get("code"), row.get("value_code"), row.get("source_code")}
    return {c for c in out if c}


def test_every_code_of_the_core_has_a_sentence_in_both_languages(zh):
    codes = _literal_codes() | set(advice.RULES)
    for scenario in PLANS:
        codes |= _emitted(estimate(scenario)["result"])
    assert len(codes) > 40  # the scan and the plans found the codes (not an empty set)
    unknown = {c for c in codes if not messages.known(c) and c not in messages.SAME_MESSAGE}
    unknown -= {"input-note"}  # the note is the user's own text
    # an advice code may have only variants of its message (hccl-buffer.set / .unset)
    unknown = {c for c in unknown if not any(k.startswith(c + ".") for k in messages.MESSAGES)}
    assert sorted(unknown) == []
    missing = [
        c
        for c in codes
        if c in messages.MESSAGES
        and not re.fullmatch(r"[A-Z0-9 ]+", messages.MESSAGES[c])  # "MFU", "PUE" read the same
        and not CJK.search(zh.get(messages.MESSAGES[c], ""))
    ]
    assert sorted(missing) == []


def test_labels_in_a_sentence_keep_acronyms():
    assert labels.in_sentence("EP communication") == "EP communication"
    assert labels.in_sentence("Pipeline bubble") == "pipeline bubble"
