"""Failures, checkpoints and restarts: how long a run really takes (goodput).

Pure and numpy-vectorized: every argument may be a scalar or an array (broadcast together); the
checkpoint mode is one string per call. Units: seconds, bytes, bytes/s, interruptions per second.

The model (first order in the overheads, exponential times between interruptions):
- interruptions: a Poisson process of rate lambda = sum over causes of (rate per unit-hour x units
  of the planned cluster) / 3600 (cards, nodes, switches; catalog/failures.toml); M = 1 / lambda.
- a checkpoint stalls training delta seconds every tau seconds of work (Young 1974: the cost of a
  checkpoint; for asynchronous and in-memory checkpoints the stall is the device-to-host snapshot
  and the checkpoint becomes durable `lag` seconds later).
- an interruption loses the work since the last durable checkpoint: (tau + delta) / 2 on average
  when checkpoints are synchronous, tau / 2 + lag when they are written in the background (a
  failure during the write falls back one more interval: (1/tau)[int_0^lag (tau + x) dx +
  int_lag^tau x dx] = tau / 2 + lag), plus the restart R = detection + rescheduling + reload.
- planned interruptions (maintenance) lose no work: they cost a restart without detection.
- wall time T_w = T_s (1 + delta / tau) + lambda T_w (rework + R) + lambda_p T_w R_p, so
  T_w = T_s (1 + delta / tau) / (1 - lambda (rework + R) - lambda_p R_p); ETTR = T_s / T_w
  (Kokolis et al. 2024's effective training time ratio). When the denominator is not positive the
  run never finishes: the caller refuses the plan with that reason.
- optimal interval: Daly 2006's higher-order estimate from delta and M (Young 1974's sqrt(2 delta M)
  to first order), never shorter than the background write of the previous checkpoint.
- spread: the number of interruptions is Poisson given the rate and the rate itself is uncertain
  (Gamma with shape = the published count behind it), so the count is negative binomial; its P10 and
  P90 come from a moment-matched Gamma through Wilson and Hilferty's cube-root approximation.

Sources: docs/sources.md#young-1974, #daly-2006, #llama3 (Table 5), #kokolis-2024,
#wilson-hilferty-1931, #numerical-recipes (the normal tail of the deadline risk).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from estimator.arrays import FloatArray
from estimator.layout.stack_profile import CHECKPOINT_MODES

SECONDS_PER_HOUR = 3600.0
Z_P90 = 1.2815515655446004  # standard normal quantile at 0.9 (P10 is -Z_P90)
MIN_PROGRESS = 0.05  # below this share of wall time doing new work, the run is refused as never finishing


def _f(x: ArrayLike) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


def interruption_rate_per_s(
    units: dict[str, ArrayLike],
    rates_per_unit_hour: dict[str, float],
    per: dict[str, str],
    scale: ArrayLike = 1.0,
) -> dict[str, FloatArray]:
    """Unexpected interruptions per second of the job, by cause: rate per unit-hour x units of the
    cluster the cause scales with (units["card"], ["node"], ["switch"]) x scale / 3,600 s/h."""
    return {
        c: _f(r) * _f(units[per[c]]) * _f(scale) / SECONDS_PER_HOUR for c, r in rates_per_unit_hour.items()
    }


def young_interval(delta_s: ArrayLike, mtbi_s: ArrayLike) -> FloatArray:
    """Young 1974: the compute time between checkpoints that minimises lost time, sqrt(2 delta M)
    (delta: seconds to checkpoint, M: mean time between interruptions, s). Returns seconds."""
    return np.sqrt(2.0 * _f(delta_s) * _f(mtbi_s))


def daly_interval(delta_s: ArrayLike, mtbi_s: ArrayLike) -> FloatArray:
    """Daly 2006's higher-order optimum: sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (delta / 2M) / 9]
    - delta for delta < 2M, else M (seconds)."""
    d, m = _f(delta_s), _f(mtbi_s)
    x = d / (2.0 * m)
    tau = np.sqrt(2.0 * d * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - d
    return np.asarray(np.where(d < 2.0 * m, tau, m))


def daly_wall_time(
    solve_s: ArrayLike, tau_s: ArrayLike, delta_s: ArrayLike, restart_s: ArrayLike, mtbi_s: ArrayLike
) -> FloatArray:
    """Daly 2006's expected wall time with exponential failures (every order of the overheads):
    T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau (seconds). The first-order model of this
    module (wall_time) tends to it as the overheads shrink; the tests compare the two."""
    m = _f(mtbi_s)
    return np.asarray(
        m * np.exp(_f(restart_s) / m) * np.expm1((_f(tau_s) + _f(delta_s)) / m) * _f(solve_s) / _f(tau_s)
    )


def checkpoint_times(
    mode: str,
    ckpt_bytes: ArrayLike,
    cards: ArrayLike,
    nodes: ArrayLike,
    write_bytes_per_s: ArrayLike,
    read_bytes_per_s: ArrayLike,
    host_copy_bytes_per_s: ArrayLike,
    peer_bytes_per_s_per_node: ArrayLike,
) -> dict[str, FloatArray]:
    """Seconds of one checkpoint: `write` to the hot tier (checkpoint bytes / its delivered write
    bandwidth), the training `stall`, the `lag` until it is durable, and the `reload` on restart.

    sync: stall = write, lag = 0, reload = bytes / hot-tier read bandwidth.
    async (Megatron-Core async_save, PyTorch DCP async_save): stall = each card's shard copied to
    host memory, bytes / cards / host copy rate (fully parallel save); lag = write.
    in-memory with replication (Gemini, SOSP 2023; NVIDIA resiliency-ext local checkpoints with
    replication): stall as async; lag and reload = one node's shard sent to / read from a peer
    node's memory over its scale-out NICs, bytes / nodes / peer bandwidth per node."""
    b = _f(ckpt_bytes)
    write = b / _f(write_bytes_per_s)
    snapshot = b / _f(cards) / _f(host_copy_bytes_per_s)
    zero = np.zeros_like(write)
    if mode == "sync":
        return {"write": write, "stall": write, "lag": zero, "reload": b / _f(read_bytes_per_s)}
    if mode == "async":
        return {"write": write, "stall": snapshot, "lag": write, "reload": b / _f(read_bytes_per_s)}
    if mode == "in-memory":
        peer = b / _f(nodes) / _f(peer_bytes_per_s_per_node)
        return {"write": write, "stall": snapshot, "lag": peer, "reload": peer}
    raise ValueError(f"checkpoint mode must be one of {CHECKPOINT_MODES}, got {mode!r}")


def rework_s(mode: str, tau_s: ArrayLike, stall_s: ArrayLike, lag_s: ArrayLike) -> FloatArray:
    """Mean work lost per interruption (s): (tau + delta) / 2 for synchronous checkpoints, tau / 2 + lag
    (+ delta / 2) when the checkpoint becomes durable `lag` seconds after its snapshot (module docstring)."""
    tau, d = _f(tau_s), _f(stall_s)
    if mode == "sync":
        return (tau + d) / 2.0
    return tau / 2.0 + d / 2.0 + _f(lag_s)


def wall_time(
    solve_s: ArrayLike,
    tau_s: ArrayLike,
    stall_s: ArrayLike,
    rate_per_s: ArrayLike,
    lost_per_interruption_s: ArrayLike,
    planned_per_s: ArrayLike,
    planned_restart_s: ArrayLike,
) -> dict[str, FloatArray]:
    """First-order expected wall time (s) and where it goes: T_w = T_s (1 + delta / tau) /
    (1 - lambda L - lambda_p R_p), L = rework + restart per unexpected interruption. Returns
    wall, checkpoints (T_s delta / tau), interruption losses (lambda T_w L), planned (lambda_p T_w R_p)
    and `progress` (the denominator: share of time not lost to interruptions; <= MIN_PROGRESS: never
    finishes, wall = inf)."""
    ts = _f(solve_s)
    ckpt = ts * _f(stall_s) / _f(tau_s)
    progress = 1.0 - _f(rate_per_s) * _f(lost_per_interruption_s) - _f(planned_per_s) * _f(planned_restart_s)
    with np.errstate(divide="ignore", invalid="ignore"):  # a run that never finishes: inf (0 x inf = nan)
        wall = np.where(progress > MIN_PROGRESS, (ts + ckpt) / np.maximum(progress, MIN_PROGRESS), np.inf)
        return {
            "wall": np.asarray(wall),
            "checkpoints": np.asarray(ckpt),
            "interruptions": np.asarray(wall * _f(rate_per_s) * _f(lost_per_interruption_s)),
            "planned": np.asarray(wall * _f(planned_per_s) * _f(planned_restart_s)),
            "progress": np.asarray(progress),
        }


def _gamma_matched(mean: ArrayLike, shape: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(mu, a, theta) of the Gamma moment-matched to the negative binomial count of this mean and
    Gamma rate shape: variance mu + mu^2 / shape, a = mu^2 / variance, theta = variance / mu (a set
    to 1 where mu = 0: the count is 0 there and the callers say so)."""
    mu = _f(mean)
    var = mu + mu * mu / _f(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(var > 0, mu * mu / var, np.inf)
        theta = np.where(mu > 0, var / mu, 0.0)
        a_safe = np.where(np.isfinite(a) & (a > 0), a, 1.0)
    return mu, np.asarray(a_safe), np.asarray(theta)


def count_quantiles(
    mean: ArrayLike, shape: ArrayLike, z: float = Z_P90
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(P10, P50, P90) of the number of interruptions (counts): negative binomial with this mean and
    Gamma rate shape (variance mean + mean^2 / shape), approximated by the Gamma of that mean and
    variance and its Wilson-Hilferty quantiles a theta (1 - 1/(9a) +/- z / (3 sqrt a))^3, clipped
    at 0 (Wilson & Hilferty 1931); the median is the same expression at z = 0, a theta (1 - 1/(9a))^3,
    about mean - theta/3 (the Gamma median's expansion a - 1/3 + 8/(405 a): docs/sources.md#choi-1994)."""
    mu, a_safe, theta = _gamma_matched(mean, shape)

    def q(sign: float) -> FloatArray:
        cube = np.maximum(1.0 - 1.0 / (9.0 * a_safe) + sign * z / (3.0 * np.sqrt(a_safe)), 0.0) ** 3
        return np.asarray(np.where(mu > 0, a_safe * theta * cube, 0.0))

    return q(-1.0), q(0.0), q(1.0)


# Chebyshev fit of erfc(x) for x >= 0: Press et al., Numerical Recipes in C, 2nd ed. (1992), section
# 6.2 `erfcc`, fractional error below 1.2e-7 everywhere (docs/sources.md#numerical-recipes)
_ERFC_COEFFS = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)
_ERFC_AT_0 = float(np.exp(sum(_ERFC_COEFFS)))  # the fit at x = 0 (t = 1)


def _horner(t: FloatArray, coeffs: tuple[float, ...]) -> FloatArray:
    """sum_k coeffs[k] t^k by Horner's rule, elementwise (dimensionless): the operations of numpy's
    polynomial.polyval in its order, without importing numpy.polynomial (a cold CLI start, issue 27)."""
    acc = coeffs[-1] + t * 0
    for c in reversed(coeffs[:-1]):
        acc = c + acc * t
    return acc


def normal_sf(z: ArrayLike) -> FloatArray:
    """P(Z > z) for a standard normal Z (vectorized, dimensionless): erfc(z / sqrt 2) / 2 with
    Numerical Recipes' Chebyshev erfc (fractional error < 1.2e-7; docs/sources.md#numerical-recipes),
    divided by its value at 0 (1 + 3e-8) so that P(Z > 0) is 1/2 exactly and the two halves,
    erfc(-x) = 2 - erfc(x) below 0, meet there (the tail stays monotone)."""
    x = np.abs(_f(z)) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.5 * x)
    poly = _horner(t, _ERFC_COEFFS)
    half = t * np.exp(-x * x + poly) / (2.0 * _ERFC_AT_0)
    return np.asarray(np.where(_f(z) >= 0, half, 1.0 - half))


def count_exceedance(x: ArrayLike, mean: ArrayLike, shape: ArrayLike) -> FloatArray:
    """P(N > x) (dimensionless) for the interruption count N of count_quantiles (the Gamma of mean mu
    and variance mu + mu^2 / shape) through the inverse of its Wilson-Hilferty quantile (Wilson &
    Hilferty 1931, docs/sources.md#wilson-hilferty-1931): (N / (a theta))^(1/3) is normal with mean
    1 - 1/(9a) and sd 1 / (3 sqrt a), so P(N > x) = P(Z > z) with
    z = 3 sqrt(a) ((x / (a theta))^(1/3) - 1 + 1/(9a)). At x = count_quantiles' P50 it is 1/2 and at
    its P90 it is 1/10 (to normal_sf's 1.2e-7); x < 0 gives 1 (the clip at 0 puts the rest of the
    lower tail on N = 0); mean 0: N = 0, so 1 for x < 0 and 0 otherwise. x in interruptions."""
    xs = _f(x)
    mu, a, theta = _gamma_matched(mean, shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(mu > 0, np.maximum(xs, 0.0) / np.where(mu > 0, a * theta, 1.0), 0.0)
        z = 3.0 * np.sqrt(a) * (np.cbrt(u) - 1.0 + 1.0 / (9.0 * a))
    p = np.where(mu > 0, normal_sf(z), 0.0)
    return np.asarray(np.where(xs < 0, 1.0, p))


def spare_coverage(spares: ArrayLike, nodes_down_mean: ArrayLike, max_spares: int = 4096) -> FloatArray:
    """Share of node failures a hot standby is ready for: P(fewer than `spares` nodes already down)
    with nodes down ~ Poisson(node failure rate x repair time) (Erlang's infinite-server queue)."""
    s = np.minimum(np.asarray(spares, dtype=np.int64), max_spares)
    m = _f(nodes_down_mean)
    if not np.any(s > 0):  # no hot standby (the default): the sum below has no term
        return np.zeros(np.broadcast(s, m).shape)
    term = np.exp(-m) * np.ones(np.broadcast(s, m).shape)
    total = np.zeros_like(term)
    top = int(np.max(s)) if s.size else 0
    for k in range(top):
        total = total + np.where(k < s, term, 0.0)
        term = term * m / (k + 1)
    return np.asarray(np.clip(total, 0.0, 1.0))


def rate_shape(rates: dict[str, FloatArray], counts: dict[str, float], scale_rel_sd: float) -> FloatArray:
    """Gamma shape of the total rate: 1 / relative variance, with each cause's rate known to shape =
    its published count (Poisson counting) and a common scale factor of relative sd `scale_rel_sd`."""
    total = sum(rates.values())
    rel_var = sum(r * r / max(counts[c], 1.0) for c, r in rates.items()) / np.maximum(total * total, 1e-300)
    return np.asarray(1.0 / (rel_var + scale_rel_sd**2))


def summary(parts: Mapping[str, Any]) -> dict[str, Any]:
    """Plain floats from 0-d arrays (one plan) for the result section."""
    return {k: (float(v) if isinstance(v, np.ndarray) and v.ndim == 0 else v) for k, v in parts.items()}
