"""The vectorized sweep path equals estimate() scenario by scenario."""

import copy
import json

import numpy as np
import pytest

from estimator.dotted import get_path
from estimator.errors import ScenarioError
from estimator.plan.batch import LAYOUT_FIELDS, SUMMARY_FIELDS, evaluate_columns
from estimator.plan.batch_reasons import NO_LAYOUT
from estimator.plan.compose import estimate

BASE = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"target_days": 30},
    "efficiency": {"mfu": 0.4},
}


def _scenario(i, cols):
    sc = copy.deepcopy(BASE)
    for field, values in cols.items():
        v = values[i]
        v = v.item() if isinstance(v, np.generic) else v
        section, key = field.split(".")
        if isinstance(v, float) and np.isnan(v):
            sc.get(section, {}).pop(key, None)
            continue
        if field in ("cluster.cards", "cluster.target_days"):
            sc["cluster"] = {}
        sc.setdefault(section, {})[key] = v
    return sc


def assert_rows_equal(cols, out, rows):
    for i in rows:
        result = estimate(_scenario(i, cols))["result"]
        for f in SUMMARY_FIELDS:
            expected = get_path(result, f)
            expected = np.inf if expected is None else expected
            assert out[f][i] == pytest.approx(expected, rel=1e-9), (i, f)


def test_numeric_and_structural_axes_match_estimate():
    cols = {
        "cluster.target_days": np.array([10, 30, 60, 90.0] * 2),
        "efficiency.mfu": np.array([0.3] * 4 + [0.5] * 4),
        "hardware.accelerator": np.array(["h100-sxm"] * 4 + ["ascend-910b2"] * 4, dtype=object),
        "cost.electricity_per_kwh": np.array([0.05, 0.1, 0.2, np.nan] * 2),
    }
    out = evaluate_columns(BASE, cols)
    assert out["ok"].all()
    assert_rows_equal(cols, out, range(8))


def test_given_cards_and_cny():
    base = {**BASE, "cluster": {"cards": 512}, "cost": {"currency": "CNY"}}
    cols = {
        "cluster.cards": np.array([256.0, 512, 2048]),
        "network.oversubscription": np.array([1.0, 2.0, 1.0]),
    }
    out = evaluate_columns(base, cols)
    for i in range(3):
        sc = copy.deepcopy(base)
        sc["cluster"] = {"cards": int(cols["cluster.cards"][i])}
        sc["network"] = {"oversubscription": float(cols["network.oversubscription"][i])}
        result = estimate(sc)["result"]
        for f in SUMMARY_FIELDS:
            expected = get_path(result, f)
            assert out[f][i] == pytest.approx(np.inf if expected is None else expected, rel=1e-9), (i, f)


def test_rows_without_mfu_use_the_layout_model_like_estimate():
    base = {k: v for k, v in BASE.items() if k != "efficiency"}
    cols = {"cluster.target_days": np.array([30.0, 60.0, 30.0])}
    out = evaluate_columns(base, cols)
    assert out["ok"].all()
    assert out["compute.cards"][0] == out["compute.cards"][2]
    for i in (0, 1):
        sc = copy.deepcopy(base)
        sc["cluster"] = {"target_days": float(cols["cluster.target_days"][i])}
        result = estimate(sc)["result"]
        assert out["compute.cards"][i] == result["compute"]["cards"]
        assert out["compute.mfu"][i] == pytest.approx(result["compute"]["mfu"], rel=1e-12)


def test_bad_rows_are_flagged_not_raised():
    base = {**BASE, "cluster": {"cards": 64}, "parallelism": {"tp": 8, "pp": 4}}
    out = evaluate_columns(base, {"cluster.cards": np.array([64.0, 80.0, 128.0])})
    assert out["ok"].tolist() == [True, False, True]  # 80 is not a multiple of tp·pp = 32
    errors = list(out["error"])
    assert errors[0] is None and errors[2] is None
    assert "fixed layout does not divide the cards" in errors[1]
    # its code and the cards it is about; the planned rows have none (plan.batch_reasons)
    assert out["reason_code"].tolist() == ["", "layout-or-fabric-refuses-cards", ""]
    assert out["reason_cards"][1] == 80 and np.isnan(out["reason_cards"][[0, 2]]).all()


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_row_without_a_time_sends_no_nan_to_the_drive_counts():
    """The row that cannot be planned has no time, so no tokens/s: its storage is counted without a
    read demand instead of casting NaN to an integer drive count (numpy's "invalid value
    encountered in cast"), and the planned rows are as before."""
    base = {**BASE, "cluster": {"cards": 64}, "parallelism": {"tp": 8, "pp": 4}}
    out = evaluate_columns(base, {"cluster.cards": np.array([64.0, 80.0, 128.0])})
    assert out["ok"].tolist() == [True, False, True]
    assert np.isnan(out["cost.capex.storage"][1]) and out["cost.capex.storage"][0] > 0


def _layout_matches(out, i, result):
    """The row's layout columns are estimate()'s parallelism section (NaN where nothing fits)."""
    par = result["parallelism"]
    for f in LAYOUT_FIELDS:
        key = f.split(".", 1)[1]
        if result["memory"]["fits"] and key in par:
            assert out[f][i] == par[key], (i, f)
        elif result["memory"]["fits"]:  # expert_tp of a dense model: neither shows one
            assert key == "expert_tp" and np.isnan(out[f][i]), (i, f)
        else:
            assert out[f][i] == "" if key == "recompute" else np.isnan(out[f][i]), (i, f)


def test_predicted_rows_with_cards_carry_estimate_s_layout():
    """Rows without an MFU (dense and MoE, three accelerators, card counts with few and many
    divisors, one too small to fit) equal estimate() of the same scenario, layout included."""
    base = {"training": {"tokens": 1e12}, "cluster": {"cards": 64}}
    rows = [
        (m, a, c)
        for m in ("llama-3.1-70b", "qwen3-30b-a3b")
        for a in ("h100-sxm", "ascend-910b2", "h800-sxm")
        for c in (8, 64, 136, 1000, 4096)
    ]
    cols = {
        "model.preset": np.array([r[0] for r in rows], dtype=object),
        "hardware.accelerator": np.array([r[1] for r in rows], dtype=object),
        "cluster.cards": np.array([r[2] for r in rows], dtype=float),
    }
    out = evaluate_columns(base, cols)
    for i, (m, a, c) in enumerate(rows):
        scenario = {**base, "model": {"preset": m}, "hardware": {"accelerator": a}, "cluster": {"cards": c}}
        if not out["ok"][i]:  # no layout fits: the plan is refused, the row has no figures
            assert out["reason_code"][i] == NO_LAYOUT and out["reason_cards"][i] == c, i
            assert all(np.isnan(out[f][i]) for f in SUMMARY_FIELDS), i
            with pytest.raises(ScenarioError) as info:
                estimate(scenario)
            assert info.value.errors[0].code == "no-feasible-layout", i
            continue
        result = estimate(scenario)["result"]
        for f in SUMMARY_FIELDS:
            expected = get_path(result, f)
            assert out[f][i] == pytest.approx(np.inf if expected is None else expected, rel=1e-9), (i, f)
        _layout_matches(out, i, result)


def test_predicted_deadline_rows_size_like_estimate():
    """Deadline rows without an MFU share one memo of searched sizes and still size like estimate()."""
    base = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e12},
        "cluster": {"target_days": 30},
    }
    cols = {
        "training.tokens": np.array([5e11, 1e12, 2e12, 1e12, 4e12]),
        "cluster.target_days": np.array([30.0, 30.0, 30.0, 7.0, 90.0]),
    }
    out = evaluate_columns(base, cols)
    assert out["ok"].all()
    for i in range(5):
        sc = {**base, "training": {"tokens": float(cols["training.tokens"][i])}}
        sc["cluster"] = {"target_days": float(cols["cluster.target_days"][i])}
        result = estimate(sc)["result"]
        assert out["compute.cards"][i] == result["compute"]["cards"], i
        assert out["compute.mfu"][i] == result["compute"]["mfu"], i
        _layout_matches(out, i, result)


def test_rows_with_an_mfu_have_no_layout_columns():
    out = evaluate_columns(BASE, {"cluster.target_days": np.array([10.0, 30.0])})
    assert np.isnan(out["parallelism.tp"]).all()
    assert (out["parallelism.recompute"] == "").all()


def test_a_group_the_core_refuses_carries_its_errors_with_their_params():
    """TP 3 fixed in the base: it divides the 24 heads of Megatron-GPT 1.7B (and its 24 KV heads) but
    not the 32 of Llama 3.1 8B, whose rows the contract refuses as a group (fixed-tp-heads, the
    heads it must divide, on parallelism.tp): its FieldErrors as a single estimate's error body gives
    them; the other group's rows have none."""
    base = {**BASE, "cluster": {"cards": 96}, "parallelism": {"tp": 3}}
    out = evaluate_columns(base, {"model.preset": np.array(["megatron-gpt-1.7b", "llama-3.1-8b"])})
    assert out["reason_code"].tolist() == ["", "fixed-tp-heads"]
    assert out["error"][1] == "parallelism.tp: must divide the 32 attention heads"
    assert out["reason_errors"][0] is None
    assert json.loads(out["reason_errors"][1]) == [
        {
            "field": "parallelism.tp",
            "message": "must divide the 32 attention heads",
            "code": "fixed-tp-heads",
            "params": {"heads": 32},
        }
    ]


def test_a_refusal_too_long_to_keep_has_no_errors_column_text():
    from estimator.errors import FieldError
    from estimator.plan.batch_reasons import ERRORS_MAX_CHARS, group_errors

    long = FieldError("model", "x" * ERRORS_MAX_CHARS, "config-missing-fields", {})
    assert group_errors([long]) is None  # its English sentence alone
    assert group_errors([FieldError("model", "x", "c", {"v": float("nan")})]) is None  # no JSON for NaN
