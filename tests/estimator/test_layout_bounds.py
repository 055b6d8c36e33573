"""steptime.bounds, the floor the layout search prunes with (layout.prune): on random scenarios
(dense and MoE models, every stack, FP8 or not, fused or unfused attention) and random structurally
valid candidates with any recompute share, the floor never exceeds the step time the full model
computes, with or without its data-parallel terms; computed once per layer shape it is each
candidate's own; without the data-parallel terms it reads no ZeRO stage; and the model's step time
never falls as more layers are recomputed, on every stack (what lets prune.layout_bound bound full
and partial recompute by no recompute, always_recompute stacks included)."""

import itertools
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from estimator.errors import ScenarioError
from estimator.layout import prune
from estimator.layout.batch_enumeration import enumerate_layouts, enumerate_valid
from estimator.layout.batch_timing import SIZE_FIELDS, SizedProblem
from estimator.layout.enumeration import axis_values
from estimator.layout.evaluation import evaluate_time
from estimator.layout.steptime.bounds import layer_floor, step_floor, step_time_floor
from estimator.layout.steptime.candidates import Candidates
from tests.estimator.test_layout_batch import DENSE, MOE, _problems, _scenario

PRESETS = DENSE + MOE
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _case(seed: int, preset: str, n_sizes: int = 1):
    """A random scenario of `preset` at n_sizes random sizes, or None when none is valid."""
    rng = random.Random(seed)
    doc = _scenario(rng, preset)
    try:
        problems = _problems(doc, sorted({8 * rng.randint(1, 512) for _ in range(n_sizes)}))
    except ScenarioError:
        return None
    return problems or None


def _sample(c: dict, rng: np.random.Generator, n: int) -> tuple[dict, np.ndarray]:
    """Up to n of the candidates c and a recompute share per candidate (random for partial)."""
    pick = rng.choice(c["size"].size, size=min(n, c["size"].size), replace=False)
    sub = {k: v[pick] for k, v in c.items()}
    rf = np.where(sub["rc"] == 2, 1.0, np.where(sub["rc"] == 3, rng.random(pick.size), 0.0))
    return sub, rf


def _sampled(seed: int, preset: str, n: int, n_sizes: int = 1):
    """(problems, up to n of their valid candidates, recompute shares) of a random case of `preset`,
    or None when the case has no valid candidate."""
    problems = _case(seed, preset, n_sizes)
    if problems is None:
        return None
    c = enumerate_valid(problems)
    if c["size"].size == 0:
        return None
    sub, rf = _sample(c, np.random.default_rng(seed), n)
    return problems, sub, rf


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(PRESETS))
def test_the_floor_never_exceeds_the_step_time(seed, preset):
    case = _sampled(seed, preset, 2000)
    if case is None:
        return
    problems, sub, rf = case
    p = problems[0]
    step = evaluate_time(p, sub, rf)["step_time_s"]
    cand = Candidates.from_mapping({**sub, "rf": rf})
    tight = step_time_floor(p, cand)
    loose = step_floor(p, cand, *layer_floor(p, cand), data_parallel=False)
    assert np.all(loose > 0)
    assert np.all(loose <= tight)
    worst = int(np.argmax(tight / step))
    assert np.all(tight <= step * (1.0 + 1e-9)), (preset, p.cards, {k: v[worst] for k, v in sub.items()})


@SETTINGS
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(PRESETS))
def test_the_floors_shared_by_layer_shape_are_each_candidate_s(seed, preset):
    """prune.tokens_upper_bound computes the layer floors once per distinct layer shape over
    several sizes (their fabrics differ); the result is the floor of each candidate on its own."""
    case = _sampled(seed, preset, 3000, n_sizes=4)
    if case is None:
        return
    problems, sub, rf = case
    shared = prune.tokens_upper_bound(problems, problems[0], sub, rf)
    sized = SizedProblem(
        problems[0],
        *(np.array([getattr(q, f) for q in problems], dtype=float)[sub["size"]] for f in SIZE_FIELDS),
    )
    cand = Candidates.from_mapping({**sub, "rf": rf})
    own = sub["m"] * sub["dp"] * sub["mbs"] * problems[0].seq_len / step_time_floor(sized, cand)  # type: ignore[arg-type]
    np.testing.assert_allclose(shared, own * (1.0 + prune.PRUNE_MARGIN), rtol=1e-12)


@SETTINGS
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(PRESETS))
def test_the_loose_floor_reads_no_zero_stage(seed, preset):
    """prune.stem_bound computes the floor without the data-parallel terms once per stem (a
    layout without its ZeRO stage): it is the same at every stage."""
    case = _sampled(seed, preset, 1000)
    if case is None:
        return
    problems, sub, rf = case
    p = problems[0]
    floors = [
        step_floor(p, cand, *layer_floor(p, cand), data_parallel=False)
        for cand in (
            Candidates.from_mapping({**sub, "zero": 0 * sub["zero"] + z, "rf": rf}) for z in range(4)
        )
    ]
    assert all(np.array_equal(f, floors[0]) for f in floors[1:])


@SETTINGS
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(PRESETS), share=st.floats(0.01, 0.99))
def test_the_step_time_never_falls_as_more_is_recomputed(seed, preset, share):
    """For one layout, no recompute <= partial recompute of a share <= full recompute in step
    time, on every stack: a stack's always_recompute modules run again in the (1 - rf) of the
    layers not recomputed in full, which a full forward of those layers includes."""
    problems = _case(seed, preset)
    if problems is None:
        return
    p = problems[0]
    lay = enumerate_layouts([p])
    n = lay["size"].size
    if n == 0:
        return
    times = [
        evaluate_time(p, {**lay, "rc": np.full(n, code)}, np.full(n, rf))["step_time_s"]
        for code, rf in ((0, 0.0), (3, share), (2, 1.0))
    ]
    for less, more in itertools.pairwise(times):
        assert np.all(less <= more * (1.0 + 1e-12)), (preset, p.stack.name, p.cards)


@SETTINGS
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(PRESETS), share=st.floats(0.01, 0.99))
def test_a_layout_s_bounds_cover_every_candidate_it_becomes(seed, preset, share):
    """prune.layout_bound (with the data-parallel terms, and without: the two codes' floors merged)
    is at least the throughput the model gives each candidate a layout becomes: every recompute
    code searched, partial recompute at any share; the looser bound is at least the tighter."""
    problems = _case(seed, preset, n_sizes=3)
    if problems is None:
        return
    base = problems[0]
    lay = enumerate_layouts(problems)
    n = lay["size"].size
    if n == 0:
        return
    pick = np.sort(np.random.default_rng(seed).choice(n, size=min(n, 1500), replace=False))
    lay = {k: v[pick] for k, v in lay.items()}
    rc_values = axis_values(base)["rc"]
    tight = prune.layout_bound(problems, base, lay, rc_values)
    loose = prune.layout_bound(problems, base, lay, rc_values, data_parallel=False)
    assert np.all(tight <= loose * (1.0 + 1e-12))
    sized = SizedProblem(
        base, *(np.array([getattr(q, f) for q in problems], dtype=float)[lay["size"]] for f in SIZE_FIELDS)
    )
    m = pick.size
    for code in rc_values.tolist():
        rf = {0: 0.0, 1: 0.0, 2: 1.0, 3: share}[code]
        speed = evaluate_time(sized, {**lay, "rc": np.full(m, code)}, np.full(m, rf))["tokens_per_s"]  # type: ignore[arg-type]
        assert np.all(speed <= tight), (preset, code, float(np.max(speed / tight)))
