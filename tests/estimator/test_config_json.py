"""A complete Hugging Face config.json as `model` (tests/data/hf_configs: the published files):
the names the estimator reads are used, the others ignored, listed in result.model.ignored_fields
and never part of the normalized scenario. Through the CLI, as a user pastes the file."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from estimator.contract.scenario import split_model

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
ROOT = Path(__file__).resolve().parents[2]

# (file, published total and active parameters, names of the file the estimator must not read)
PUBLISHED = {
    # Llama 3.1 model card: 8.03B (rope_scaling is read since engine 2.37.0: its rope_type selects
    # the stack's unfused RoPE, steptime.unfused)
    "llama-3.1-8b": (8.03e9, 8.03e9, {"architectures", "rope_theta", "torch_dtype"}),
    # Qwen3-30B-A3B model card: 30.5B total, 3.3B activated
    "qwen3-30b-a3b": (
        30.5e9,
        3.3e9,
        {"architectures", "mlp_only_layers", "norm_topk_prob", "max_window_layers"},
    ),
    # DeepSeek-V3 report: 671B total, 37B activated (MTP module not counted; num_nextn_predict_layers
    # is read since engine 2.24.0: the step time prices the module)
    "deepseek-v3": (
        671e9,
        37e9,
        {"quantization_config", "scoring_func", "n_group"},
    ),
}


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text(encoding="utf-8"))


def plan_cli(tmp_path: Path, model: dict) -> subprocess.CompletedProcess:
    scenario = {
        "model": model,
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 256},
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "estimator", "plan", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_config_json_plans_through_the_cli(tmp_path, name):
    total, active, unread = PUBLISHED[name]
    raw = config(name)
    done = plan_cli(tmp_path, raw)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    model = out["result"]["model"]
    assert model["total_params"] == pytest.approx(total, rel=0.02)
    assert model["active_params"] == pytest.approx(active, rel=0.02)
    ignored = set(model["ignored_fields"])
    assert unread <= ignored and not ignored & set(out["scenario"]["model"])
    assert {"hidden_size", "num_hidden_layers", "vocab_size"} <= set(out["scenario"]["model"])
    nulls = {k for k, v in raw.items() if v is None}  # read, and null means "not set"
    assert ignored | set(out["scenario"]["model"]) | nulls == set(raw)  # every name: read or listed
    note = next(w for w in out["result"]["warnings"] if w["code"] == "config-fields-ignored")
    assert note["params"]["count"] == len(ignored)


def test_split_model_keeps_what_the_estimator_reads():
    kept, ignored = split_model({"n_layer": 12, "torch_dtype": "float16", "model_type": "gpt2", "rope": {}})
    assert kept == {"n_layer": 12, "model_type": "gpt2"} and ignored == ["rope", "torch_dtype"]


def test_multimodal_config_reads_its_text_config():
    """Qwen2-VL-style: the language model's names under text_config; the vision part is ignored."""
    kept, ignored = split_model({"vision_config": {"depth": 32}, "text_config": {"hidden_size": 8, "foo": 1}})
    assert kept == {"hidden_size": 8} and ignored == ["foo", "vision_config"]


def test_a_read_name_out_of_range_is_still_refused(tmp_path):
    done = plan_cli(tmp_path, {**config("llama-3.1-8b"), "num_hidden_layers": 0})
    assert done.returncode == 2 and "model.num_hidden_layers" in done.stderr
