"""The CLI's layout line names every parallel degree that multiplies to the cards: TP x PP x CP x DP."""

from estimator.report_text import _headline_rows, _layout_lines

RESULT_PARALLELISM = {
    "tp": 8,
    "pp": 2,
    "dp": 8,
    "ep": 1,
    "zero_stage": 1,
    "recompute": "partial",
    "micro_batch_size": 1,
    "micro_batches": 16,
    "bubble_fraction": 0.007,
    "step_time_s": 32.0,
    "predicted_mfu": 0.5,
    "breakdown_s": {"compute": 30.0},
    "first_stage_layers": 40,
    "last_stage_layers": 40,
}


def _layout_line(cp: int) -> str:
    return _layout_lines({**RESULT_PARALLELISM, "cp": cp})[0]


def test_context_parallelism_is_on_the_layout_line():
    # 8 x 2 x 8 x 8 = 1,024 cards: without CP the line would multiply to 128
    assert _layout_line(8).startswith("Layout: TP 8 x PP 2 x CP 8 x DP 8 x EP 1,")
    assert _layout_line(1).startswith("Layout: TP 8 x PP 2 x DP 8 x EP 1,")


def test_one_server_is_one_node():
    compute = {"training_flop": 1e20, "flop_per_token": 1e10, "cards": 8, "nodes": 1, "wall_clock_days": 1.0}
    compute |= {"mfu": 0.5, "accelerator_hours": 192.0, "tokens_per_s": 1e5}
    rows = _headline_rows({"hardware": {"cards_per_node": 8}}, {"compute": compute})
    assert ["cards", "8", "1 node of 8"] in rows


def test_a_given_mfu_says_the_step_the_plan_runs_under_the_predicted_one():
    # 4,194,304 tokens a step at 1e5 tokens/s (the given MFU's throughput): 41.94 s, where the
    # layout model predicts 32 s; the days count the 41.94 s
    p = {**RESULT_PARALLELISM, "cp": 1, "global_batch_tokens": 4_194_304}
    given = {"parallelism": p, "compute": {"mfu_source": "given", "mfu": 0.4, "tokens_per_s": 1e5}}
    lines = _layout_lines(p, given)
    assert lines[1] == (
        "Given MFU 40.0%: the plan's step is 41.94 s (the layout model's 32.00 s above only ranks the layouts)"
    )
    predicted = {"parallelism": p, "compute": {"mfu_source": "predicted", "tokens_per_s": 1e5}}
    assert not any("Given MFU" in line for line in _layout_lines(p, predicted))
