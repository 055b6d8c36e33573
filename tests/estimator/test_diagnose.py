"""Diagnose a measured run against the model's breakdown (estimator.plan.diagnose): the article's
section 5.1 rule (communication wait above 30 % of the step points at the network), the other
findings, the field paths of bad input, and the CLI subcommand."""

import json

import pytest

from estimator.__main__ import main
from estimator.errors import ScenarioError
from estimator.plan.diagnose import NETWORK_WAIT_SHARE, diagnose

RUN = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"seq_len": 8192, "global_batch_tokens": 4194304},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 256},
    "parallelism": {"tp": 8, "pp": 4, "dp": 8},
}


def run(**measured: float) -> dict:
    return diagnose({**RUN, "measured": measured})


def codes(out: dict) -> list[str]:
    return [f["code"] for f in out["findings"]]


def test_45_percent_communication_wait_points_at_the_network_with_the_figures():
    out = run(step_time_s=60.0, compute_s=31.0, communication_s=27.0, data_loading_s=1.2)
    first = out["findings"][0]
    assert first["code"] == "diagnose.network" and first["severity"] == "warning"
    assert first["params"]["share"] == pytest.approx(27.0 / 60.0)  # 45 %
    assert first["params"]["threshold"] == NETWORK_WAIT_SHARE == 0.30  # the article, section 5.1
    assert first["params"]["measured_s"] == 27.0
    assert "45%" in first["message"] and "section 5.1" in first["message"]
    assert out["run"]["comm_wait_share"] == pytest.approx(0.45)


def test_the_model_parts_add_up_to_the_model_step():
    out = run(step_time_s=50.0)
    assert sum(t["model_s"] for t in out["terms"]) == pytest.approx(out["model"]["step_time_s"], rel=1e-9)
    assert out["model"]["step_ratio"] == pytest.approx(50.0 / out["model"]["step_time_s"])
    assert all(t["measured_s"] is None for t in out["terms"])


def test_20_percent_wait_is_not_a_network_fault_and_slow_data_loading_is_named():
    out = run(step_time_s=50.0, communication_s=10.0, data_loading_s=5.0)
    assert "diagnose.network" not in codes(out)
    data = next(f for f in out["findings"] if f["code"] == "diagnose.data-loading")
    assert data["params"]["share"] == pytest.approx(0.1)


def test_a_run_at_the_models_figures_matches():
    step = run(step_time_s=1000.0)["model"]["step_time_s"]  # any possible step: the model's is read back
    assert codes(run(step_time_s=step)) == ["diagnose.matches"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**RUN}, "measured"),
        ({**RUN, "measured": {"step_time_s": 10.0, "compute_s": 8.0, "communication_s": 4.0}}, "measured"),
        ({**RUN, "measured": {"step_time_s": -1}}, "measured.step_time_s"),
        ({**RUN, "measured": {"step_time_s": 10.0, "gpu_util": 0.5}}, "measured.gpu_util"),
        (
            {**RUN, "cluster": {"target_days": 30}, "parallelism": {}, "measured": {"step_time_s": 1}},
            "cluster.cards",
        ),
    ],
)
def test_bad_input_is_refused_with_its_path(body, field):
    with pytest.raises(ScenarioError) as info:
        diagnose(body)
    assert info.value.errors[0].field == field


def test_cli_diagnose_prints_the_terms_and_exits_2_on_bad_input(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({**RUN, "measured": {"step_time_s": 60.0, "communication_s": 27.0}}))
    assert main(["diagnose", str(path)]) == 0
    text = capsys.readouterr().out
    assert "communication" in text and "diagnose.network" in text
    path.write_text(json.dumps({**RUN, "measured": {"step_time_s": 0}}))
    assert main(["diagnose", str(path), "--format", "json"]) == 2
    assert capsys.readouterr().err.startswith("error: measured.step_time_s:")
