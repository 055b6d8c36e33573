"""The work budget of one request: every cap on what a scenario, a sweep or a request body may ask.

One place for each number, so the README, the JSON Schema (`estimator.contract.scenario`), the API and the
CLI all state and enforce the same limits. The caps sit well above the largest published training
runs (Llama 3 405B: 126 layers, 16,384 GPUs; DeepSeek-V3: 61 layers, 256 routed experts, 2,048
GPUs; Kimi K2: 384 experts), so a real plan never meets them; they stop a single anonymous request
from holding a web worker for seconds (issue 12: 10,000 layers x 100,000 experts x 8.6 M cards x
1 M Monte Carlo samples took 21 s).

Units: counts unless the name says otherwise; bytes for sizes; seconds for times.
"""

from __future__ import annotations

# ---- one scenario (estimator.contract.scenario validates these with the field path) --------------------
MAX_LAYERS = 1_000  # model.num_hidden_layers (and its config.json aliases), first_k_dense_replace
MAX_EXPERTS = 1_024  # model.num_experts / n_routed_experts / num_experts_per_tok / n_shared_experts
MAX_CARDS = 1_048_576  # cluster.cards, parallelism.dp, serving.cards (2**20 accelerators)
MAX_SCALEUP_DOMAIN = 1_024  # hardware.accelerator.scaleup_domain_cards, hardware.cards_per_node
MAX_MC_SAMPLES = 100_000  # uncertainty.samples (Monte Carlo draws); the default is 10,000
MIN_TOKENS = 1.0  # training.tokens: fewer than one token cannot be planned
# Parallel layouts the search may enumerate for one scenario. A MoE model at 128K+ tokens inside a
# CloudMatrix 384 domain gives about 2.9 M at any card count from 384 on (DeepSeek-V3: 2,927,232;
# TP and expert TP up to 256, EP up to 256, CP up to 32), so the cap is above that. Measured on
# the search (engine 2.63.0, one-byte reason codes): 2.9 M layouts 0.3 s and 170 MB peak RSS,
# 4.2 M 0.5 s and 226 MB; the former cap of 2 M cost 520 MB with eight-byte codes. The same cap
# bounds the layouts a refusal's nearest-layouts search counts over all its searches (layout.nearest).
MAX_LAYOUT_CANDIDATES = 4_000_000
SEARCH_SECONDS = 2.0  # wall-clock budget of the layout search; then it returns its best so far

# ---- sweeps (sweeps.services checks these before the core validates the request) ---------------
MAX_SWEEP_ROWS = 2_000_000  # scenarios in one sweep (the product of its axes)
MAX_SWEEP_AXES = 8
MAX_AXIS_VALUES = 100_000  # values of one numeric axis (a list or a {start, stop, step} range)
MAX_TEXT_AXIS_VALUES = 200  # values of one string or boolean axis (each is validated in full)
SWEEP_SAMPLE_VALUES = 200  # numeric axis values validated against the base (extremes + an even sample)
# distinct sizings for a chance of meeting the deadline (cluster.deadline_confidence) in one sweep: the
# product of its axes but prices; at up to ~40 ms each (a miss chance searched over sizes: Qwen3-30B-A3B
# on H800 over 30 token counts, 37.7 ms a row) about 7 minutes of one worker, within a chunk's 900 s
MAX_SWEEP_CONFIDENT_SIZINGS = 10_000
# distinct budget sizings (cluster.budget) in one sweep: the product of its axes but the prices that
# change no capex; a search of the sizes a budget buys costs 5 to 60 ms (Llama 3.1 405B, 15T tokens on
# H100, 0.1 to 2 G USD, failures counted), as a confidence search does, so the same bound
MAX_SWEEP_BUDGET_SIZINGS = 10_000

# ---- batches of estimates (integrations.batches: POST /api/v1/estimates/batch) -----------------
MAX_BATCH_SCENARIOS = 50  # scenarios in one batch; each one also has the budget of a single estimate

# ---- request bodies (api.parsers, config middleware, the CLI) ------------------------------------
MAX_BODY_BYTES = 1_000_000  # a JSON body or form post; larger answers 413
MAX_JSON_DEPTH = 32  # nesting of objects and arrays; a scenario needs 4
MAX_KEY_CHARS = 100  # length of one object key


def as_dict() -> dict[str, float | int]:
    """Every limit by name (for the README table, the schema description and the API docs)."""
    return {k: v for k, v in globals().items() if k.isupper() and isinstance(v, int | float)}
