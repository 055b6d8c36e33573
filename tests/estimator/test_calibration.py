"""calibration.pilot: the factors fitted from a pilot run, the guard rails, and the held-out check on
published families (estimator/validation/pilot_holdout.py; runs in reference_data/throughput_runs.toml)."""

import dataclasses

import pytest

from estimator import catalog
from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.search import search
from estimator.plan.calibration import COMPUTE_FACTOR_MIN, VALIDATED_RATIO_MIN
from estimator.plan.compose import estimate, problem_at
from estimator.validation.pilot_holdout import holdout_table, pilot_block
from estimator.validation.published_runs import published_runs, run_scenario, throughput_rows

MODELS, RUNS = published_runs()
BY_ID = {r["id"]: r for r in RUNS}
# Llama 3.1 8B: 6·8.03e9 + 12·32·8192·4096 = 6.106e10 FLOP per token (PaLM's count with attention)
H100_BF16_PEAK = catalog.accelerator("h100-sxm").peak_flops_bf16


def target(**pilot: object) -> dict:
    block = {"cards": 8, "seq_len": 8192, "global_batch_tokens": 64 * 8192, **pilot}
    return {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 512 * 8192},
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cluster": {"cards": 64},
        "calibration": {"pilot": block},
    }


def refusal(scenario: dict) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioError) as info:
        estimate(scenario)
    return [(e.field, e.message) for e in info.value.errors]


def test_compute_factor_scales_every_compute_term_by_its_inverse():
    """By hand: twice the compute rates halve GEMM, attention and element-wise time exactly."""
    r = resolve(validate_shape({**target(measured_step_time_s=1.0), "calibration": None}))
    problem = problem_at(r, 8)
    best = search(problem).best
    assert best is not None
    fixed = {**problem.fixed, "tp": best.tp, "pp": best.pp, "micro_batch_size": best.micro_batch_size}
    fixed.update(zero_stage=best.zero_stage, recompute=best.recompute, cp=best.cp, top_n=0)
    one = search(dataclasses.replace(problem, fixed=fixed)).best
    two = search(dataclasses.replace(problem, fixed=fixed, compute_factor=2.0)).best
    assert one is not None and two is not None
    for term in ("gemm", "attention", "elementwise"):
        assert two.compute_detail_s[term] == pytest.approx(one.compute_detail_s[term] / 2.0, rel=1e-12)
    assert two.breakdown_s["optimizer"] == pytest.approx(one.breakdown_s["optimizer"] / 2.0, rel=1e-12)


def test_the_pilot_planned_as_the_target_reproduces_its_measurement():
    """Calibrate on Megatron-Bridge's Llama 3 8B on 8 H100 (14,451 tokens/s per GPU, published) and
    plan that same run: the calibrated prediction is the measurement."""
    run = BY_ID["llama3-8b-8xh100-mcore-fp8"]
    scenario = {**run_scenario(run, MODELS), "calibration": {"pilot": pilot_block(run, MODELS)}}
    result = estimate(scenario)["result"]
    assert result["parallelism"]["tokens_per_s"] / 8 == pytest.approx(14451, rel=1e-4)
    assert result["calibration"]["pilot"]["measured_tokens_per_s_per_card"] == pytest.approx(14451)
    assert [f["name"] for f in result["calibration"]["factors"]] == ["compute"]
    assert result["calibration"]["band"]["relative_half_width"] == pytest.approx(0.03)  # nothing changes


def test_a_measured_step_time_is_the_same_measurement_as_tokens_per_s():
    # 64 sequences of 8,192 tokens on 8 cards at 10,000 tokens/s per card: 6.5536 s per step
    by_rate = estimate(target(measured_tokens_per_s_per_card=10000))["result"]["calibration"]
    by_step = estimate(target(measured_step_time_s=6.5536))["result"]["calibration"]
    assert by_rate["factors"][0]["value"] == pytest.approx(by_step["factors"][0]["value"], rel=1e-5)


def test_a_wait_share_fits_a_communication_factor_that_reproduces_it():
    # two nodes of the pilot, so data-parallel traffic crosses the NICs
    result = estimate(
        target(
            cards=16,
            global_batch_tokens=16 * 8192,
            measured_tokens_per_s_per_card=9000,
            measured_comm_wait_share=0.3,
        )
    )["result"]
    cal = result["calibration"]
    assert [f["name"] for f in cal["factors"]] == ["compute", "communication"]
    assert cal["pilot"]["calibrated_comm_wait_share"] == pytest.approx(0.3, abs=1e-3)
    assert cal["factors"][1]["value"] < 1.0  # more wait than the model's links give: slower links


def test_a_pilot_above_the_chips_peak_is_refused_with_its_path():
    # the kernels compute 6·8,030,261,248 + 12·32·8192·4096 / 2 = 54,624,018,432 FLOP a token (the
    # causal half of the attention matrix): 989.4 TFLOP/s / 5.4624e10 = 18,113 tokens/s per card at peak
    at_peak = H100_BF16_PEAK / (6 * 8_030_261_248 + 12 * 32 * 8192 * 4096 / 2)
    errors = refusal(target(measured_tokens_per_s_per_card=1.01 * at_peak))
    assert errors[0][0] == "calibration.pilot.measured_tokens_per_s_per_card"
    assert "above peak" in errors[0][1]


def test_a_pilot_far_below_every_validated_row_is_refused():
    plausible = estimate(target(measured_tokens_per_s_per_card=8000))["result"]["calibration"]
    predicted = plausible["pilot"]["predicted_tokens_per_s_per_card"]
    errors = refusal(target(measured_tokens_per_s_per_card=0.2 * predicted))
    assert errors[0][0] == "calibration.pilot.measured_tokens_per_s_per_card"
    assert f"{VALIDATED_RATIO_MIN:.2f}x" in errors[0][1]


def test_a_dense_pilot_for_an_moe_target_is_refused():
    scenario = target(measured_tokens_per_s_per_card=8000)
    scenario["model"] = {"preset": "qwen3-30b-a3b"}
    scenario["calibration"]["pilot"]["model"] = {"preset": "llama-3.1-8b"}
    scenario["training"]["seq_len"] = 4096
    scenario["calibration"]["pilot"]["seq_len"] = 4096
    errors = refusal(scenario)
    assert errors == [("calibration.pilot.model", errors[0][1])]
    assert "dense" in errors[0][1] and "mixture-of-experts" in errors[0][1]


def test_a_pilot_on_another_chip_is_carried_across_and_says_so():
    same = estimate(target(measured_tokens_per_s_per_card=8000))["result"]["calibration"]
    other = target(measured_tokens_per_s_per_card=3000, hardware={"accelerator": "a100-sxm-80gb"})
    across = estimate(other)["result"]["calibration"]
    assert not same["carried_across_chips"]
    assert across["carried_across_chips"] and across["pilot"]["accelerator"] == "a100-sxm-80gb"
    assert across["band"]["relative_half_width"] >= same["band"]["relative_half_width"] + 0.10


def test_pilot_errors_carry_their_path_under_calibration_pilot():
    errors = refusal(target(measured_step_time_s=5.0, parallelism={"tp": 3}))
    assert errors[0][0] == "calibration.pilot.parallelism.tp"
    both = target(measured_step_time_s=5.0)
    both["efficiency"] = {"mfu": 0.4}
    assert refusal(both)[0][0] == "calibration"
    with pytest.raises(ScenarioError) as info:
        validate_shape(target(measured_step_time_s=5.0, measured_tokens_per_s_per_card=9000))
    assert info.value.errors[0].field == "calibration.pilot"


def test_the_step_far_slower_than_the_model_at_its_lowest_efficiency_is_refused():
    errors = refusal(target(measured_step_time_s=1e5))
    assert errors[0][0] == "calibration.pilot.measured_step_time_s"
    assert COMPUTE_FACTOR_MIN > 0


def test_the_validated_ratio_floor_is_the_lowest_of_the_published_runs():
    """VALIDATED_RATIO_MIN names the lowest measured / predicted ratio of the published runs."""
    lowest = min(r["published"] / r["predicted"] for r in throughput_rows())
    assert lowest == pytest.approx(VALIDATED_RATIO_MIN, abs=0.01)


def test_without_calibration_nothing_changes():
    scenario = {**target(measured_step_time_s=1.0)}
    scenario.pop("calibration")
    out = estimate(scenario)
    assert "calibration" not in out["result"] and "calibration" not in out["scenario"]


@pytest.fixture(scope="module")
def holdout():
    return holdout_table()


def test_holdout_calibrated_on_the_smallest_run_predicts_the_larger_rows_within_20_percent(holdout):
    """Five published families (Megatron-Bridge and NeMo FP8 on H100, llm-foundry BF16), 11 targets,
    all with a plan: NeMo GPT-3 20B on 64 and 175B on 512 fit since engine 2.29 (the launcher's bf16
    gradients, docs/steptime.md "Published layouts over HBM"), MPT-30B on 8 since engine 2.18 (FSDP
    shards the fp32 master weights: no sharded 16-bit copy)."""
    assert len(holdout) == 11
    cases = {r["case"] for r in holdout}
    assert {"nemo-gpt3-20b-64xh100-fp8", "nemo-gpt3-175b-512xh100-fp8", "mpt-30b-8xh100-8k-bf16"} <= cases
    for row in holdout:
        assert abs(row["error_calibrated_pct"]) < 20.0, row


def test_holdout_band_holds_the_published_figure_in_most_rows(holdout):
    inside = sum(row["in_band"] for row in holdout)
    assert inside / len(holdout) >= 0.8


def test_a_sweep_row_with_the_calibration_block_equals_its_estimate():
    from estimator.plan.batch import evaluate_columns

    base = target(measured_tokens_per_s_per_card=8000)
    cols = evaluate_columns(base, {"cluster.cards": [64, 128]})
    for i, cards in enumerate((64, 128)):
        one = estimate({**base, "cluster": {"cards": cards}})["result"]["compute"]
        assert cols["ok"][i]
        assert cols["compute.tokens_per_s"][i] == pytest.approx(one["tokens_per_s"], rel=1e-9)
    plain = evaluate_columns({**base, "calibration": None}, {"cluster.cards": [64]})
    assert plain["compute.tokens_per_s"][0] != pytest.approx(cols["compute.tokens_per_s"][0], rel=1e-3)


def test_a_sweep_accepts_the_calibration_block_and_an_axis_over_the_measurement():
    from estimator.contract.sweep import validate_sweep
    from estimator.plan.batch import evaluate_columns

    field = "calibration.pilot.measured_tokens_per_s_per_card"
    request = {"base": target(measured_tokens_per_s_per_card=8000), "axes": {field: [7000, 9000]}}
    _name, base, axes = validate_sweep(request)
    assert [a.field for a in axes] == [field]
    cols = evaluate_columns(base, {field: [7000, 9000]})
    assert cols["ok"].all()
    assert cols["compute.tokens_per_s"][1] > cols["compute.tokens_per_s"][0]  # a faster pilot, a faster plan
