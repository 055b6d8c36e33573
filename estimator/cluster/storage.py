"""Training storage in the source article's three tiers (§3.4): hot, warm and cache.

- hot: parallel file system on NVMe. Holds the working set (tokenized data being read) and the kept
  checkpoints; must absorb a checkpoint within the allowed write window and feed tokens to the cards.
- warm: HDD or object store. Holds the raw corpus, the tokenized data set and the checkpoint archive,
  with replication / erasure-coding overhead (3x replication = 3.0, 8+2 EC = 1.25).
- cache: local NVMe on each training server: that node's prefetch shard of the tokenized data plus
  local staging of that node's checkpoint shard (two-stage checkpointing as in NVIDIA's DGX GB200
  storage guide: local NVMe first, then flushed to shared storage).

Units: bytes, bytes/s, seconds; drive and node counts are whole numbers. Sources: docs/architecture.md#formulas
(storage); docs/sources.md#storage-sizing (checkpoint sizing, tokens -> bytes, drives) and
docs/sources.md#nvidia-superpod-ra. Default drive figures are [U] "typical" catalog values; callers pass catalog
figures (estimator/catalog Drive: capacity_bytes, read/write_bytes_per_s) instead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from estimator.arrays import FloatArray, IntArray
from estimator.errors import FieldError, ScenarioError

UINT16_VOCAB_LIMIT = 65_536


def checkpoint_bytes(params_total: ArrayLike, bytes_per_param: float = 12.0) -> FloatArray:
    """Bytes of one full training checkpoint = parameters x bytes per parameter (array-friendly).

    12 B/param = fp32 master weights + Adam m + v (4+4+4); 14 adds the bf16 weights (Megatron-style
    checkpoints save both); gradients are not saved. Source: docs/sources.md#storage-sizing (12-16 B/param). Llama-3 405B at 12 B/param: 4.86e12 bytes ("about 4.9 TB").
    """
    return np.asarray(params_total, dtype=np.float64) * bytes_per_param


def tokenized_bytes_per_token(vocab_size: ArrayLike) -> int | IntArray:
    """Bytes per stored token in a Megatron indexed dataset (.bin): 2 (uint16) for vocab <= 65,536,
    else 4 (int32). Source: docs/sources.md#storage-sizing (NeMo Curator docs; Megatron indexed_dataset). Array-friendly."""
    out = np.where(np.asarray(vocab_size) <= UINT16_VOCAB_LIMIT, 2, 4).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def dataset_bytes(tokens: ArrayLike, vocab_size: ArrayLike) -> FloatArray:
    """Tokenized data-set bytes = tokens x bytes per token (docs/sources.md#storage-sizing: 15.6T tokens x 4 B = 62.4 TB)."""
    return np.asarray(tokens, dtype=np.float64) * tokenized_bytes_per_token(vocab_size)


def checkpoint_write_bytes_per_s(ckpt_bytes: ArrayLike, write_window_s: ArrayLike) -> FloatArray:
    """Hot-tier aggregate write bandwidth (bytes/s) = checkpoint bytes / allowed write window (s).

    Source: docs/sources.md#storage-sizing ("BW >= ckpt_bytes / allowed_stall_seconds"). 4.86 TB in
    120 s -> 40.5 GB/s."""
    return np.asarray(np.asarray(ckpt_bytes, dtype=np.float64) / np.asarray(write_window_s, dtype=np.float64))


def data_read_bytes_per_s(tokens_per_s: ArrayLike, bytes_per_token: ArrayLike) -> FloatArray:
    """Training-data read bandwidth (bytes/s) = tokens/s x stored bytes per token (docs/architecture.md#formulas).
    Small for text: 1M tokens/s x 4 B = 4 MB/s."""
    return np.asarray(
        np.asarray(tokens_per_s, dtype=np.float64) * np.asarray(bytes_per_token, dtype=np.float64)
    )


def drives_needed(required: ArrayLike, per_drive: ArrayLike) -> int | IntArray:
    """Whole drives (or nodes) to carry `required` given `per_drive` of the same unit (ceil, array-friendly)."""
    out = np.ceil(
        np.asarray(required, dtype=np.float64) / np.asarray(per_drive, dtype=np.float64) - 1e-9
    ).astype(np.int64)
    return int(out) if out.ndim == 0 else out


ARCHIVE_INTERVAL_S = 3600.0  # s: the warm tier's archive interval where no checkpoint interval is given


@dataclass(frozen=True)
class HotTier:
    """NVMe parallel file system. Bytes, bytes/s, seconds, counts."""

    capacity_bytes: float  # usable: working set + kept checkpoints
    raw_bytes: float  # capacity x protection overhead (drive bytes before fill headroom)
    read_bytes_per_s: float  # required aggregate read
    write_bytes_per_s: float  # required aggregate write (checkpoint burst)
    read_capability_bytes_per_s: float  # what the chosen drives/nodes deliver (derated)
    write_capability_bytes_per_s: float
    drives: int  # max of the bounds below
    drives_for_capacity: int
    drives_for_read: int
    drives_for_write: int
    nodes: int
    restart_read_s: float  # one checkpoint read back at the delivered read bandwidth


@dataclass(frozen=True)
class WarmTier:
    """HDD / object store. Bytes, bytes/s, counts."""

    capacity_bytes: float  # usable: raw corpus + tokenized set + checkpoint archive
    raw_bytes: float  # capacity x protection overhead
    overhead: float  # 3.0 for 3x replication, 1.25 for 8+2 erasure coding
    write_bytes_per_s: float  # sustained checkpoint archiving: checkpoint bytes / interval
    drives: int
    drives_for_capacity: int
    drives_for_write: int
    nodes: int


@dataclass(frozen=True)
class CacheTier:
    """Local NVMe on each training node. Bytes."""

    per_node_bytes: float  # prefetch shard + checkpoint staging
    prefetch_bytes: float
    checkpoint_staging_bytes: float
    fits: bool | None  # against local_nvme_bytes; None when that was not given


@dataclass(frozen=True)
class Storage:
    """The storage section of a plan: checkpoint and dataset sizes and the three tiers. Bytes."""

    checkpoint_bytes: float
    dataset_bytes: float  # tokenized
    raw_dataset_bytes: float
    bytes_per_token: int  # stored (tokenized) bytes per token
    bytes_per_param_checkpoint: float
    hot: HotTier
    warm: WarmTier
    cache: CacheTier
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The contract's `storage` section (docs/architecture.md#scenario-contract) plus the extra fields above."""
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class StorageInputs:
    """What sizes the tiers besides the model, the data and the cluster: the checkpoint policy, the
    drives and storage nodes (catalog Drive figures), deratings, protection overheads and fill.
    Units: s, bytes, bytes/s, counts, fractions. The defaults are [U] "typical" values
    (module docstring); `plan` fills every field it knows from the scenario and the catalog
    (money.pricing.storage_inputs)."""

    # seconds between checkpoints: the scenario's (contract.resolve.checkpoint_interval) or, where
    # Daly's optimum sets it (known only after the storage: plan.goodput), ARCHIVE_INTERVAL_S, the
    # warm tier then archiving one checkpoint that often
    checkpoint_interval_s: float = ARCHIVE_INTERVAL_S
    checkpoint_write_s: float = 120.0
    checkpoints_kept: int = 5
    checkpoints_archived: int | None = None  # None: as many as kept
    bytes_per_param_checkpoint: float = 12.0
    raw_bytes_per_token: float = 4.0
    nvme_capacity_bytes: float = 15.36e12
    nvme_read_bytes_per_s: float = 7e9
    nvme_write_bytes_per_s: float = 4e9
    hdd_capacity_bytes: float = 24e12
    hdd_read_bytes_per_s: float = 270e6
    hdd_write_bytes_per_s: float = 270e6
    hot_drives_per_node: int = 24
    warm_drives_per_node: int = 60
    hot_node_bytes_per_s: float | None = None  # a storage node's write (bytes/s); None: no node bound
    hot_node_read_bytes_per_s: float | None = None  # its read (bytes/s); None: the write figure
    nvme_derating: float = 0.5
    hdd_derating: float = 0.5
    hot_overhead: float = 1.25
    warm_overhead: float = 1.25
    max_fill: float = 0.8
    hot_dataset_fraction: float = 1.0
    cache_dataset_fraction: float = 1.0
    local_checkpoint_copies: int = 1
    local_nvme_bytes: float | None = None
    restart_target_s: float | None = None

    @property
    def archived(self) -> int:
        """Checkpoints kept in the warm archive (as many as kept on the hot tier unless given)."""
        return self.checkpoints_kept if self.checkpoints_archived is None else self.checkpoints_archived


DEFAULT_INPUTS = StorageInputs()

_POSITIVE = (
    "params_total",
    "tokens",
    "vocab_size",
    "tokens_per_s",
    "nodes",
    "checkpoint_interval_s",
    "checkpoint_write_s",
    "bytes_per_param_checkpoint",
    "nvme_capacity_bytes",
    "nvme_read_bytes_per_s",
    "nvme_write_bytes_per_s",
    "hdd_capacity_bytes",
    "hdd_read_bytes_per_s",
    "hdd_write_bytes_per_s",
    "hot_drives_per_node",
    "warm_drives_per_node",
    "hot_node_bytes_per_s",
    "hot_node_read_bytes_per_s",
    "nvme_derating",
    "hdd_derating",
    "hot_overhead",
    "warm_overhead",
    "max_fill",
    "restart_target_s",
)
_NONNEG = (
    "checkpoints_kept",
    "checkpoints_archived",
    "raw_bytes_per_token",
    "hot_dataset_fraction",
    "cache_dataset_fraction",
    "local_checkpoint_copies",
)


def _validate(values: Mapping[str, Any], positive: tuple[str, ...], nonneg: tuple[str, ...]) -> None:
    errs = []
    for name in positive:
        v = values[name]
        if v is not None and not (isinstance(v, Real) and math.isfinite(float(v)) and float(v) > 0):
            errs.append(FieldError(f"storage.{name}", f"{name} must be a positive number, got {v!r}."))
    for name in nonneg:
        v = values[name]
        if not (isinstance(v, Real) and math.isfinite(float(v)) and float(v) >= 0):
            errs.append(FieldError(f"storage.{name}", f"{name} must be zero or more, got {v!r}."))
    if errs:
        raise ScenarioError(errs)


def _gb(x: float) -> str:
    return f"{x / 1e9:.3g} GB/s"


def _hot_counts(
    ckpt: FloatArray, data: FloatArray, data_read: FloatArray, inputs: StorageInputs
) -> dict[str, NDArray[Any]]:
    """Hot-tier requirements, drives (max of the capacity, read and write bounds) and nodes."""
    s, f = inputs, np.asarray
    read_req = np.maximum(data_read, ckpt / s.restart_target_s) if s.restart_target_s else data_read
    write_req = checkpoint_write_bytes_per_s(ckpt, s.checkpoint_write_s)
    hot_cap = s.hot_dataset_fraction * data + f(s.checkpoints_kept, dtype=np.float64) * ckpt
    nvme_read_eff = s.nvme_read_bytes_per_s * s.nvme_derating
    nvme_write_eff = s.nvme_write_bytes_per_s * s.nvme_derating / s.hot_overhead
    by_cap = f(drives_needed(hot_cap * s.hot_overhead, s.nvme_capacity_bytes * s.max_fill))
    by_read = f(drives_needed(read_req, nvme_read_eff))
    by_write = f(drives_needed(write_req, nvme_write_eff))
    hot_drives = np.maximum(np.maximum(by_cap, by_read), np.maximum(by_write, 1))
    hot_nodes = f(drives_needed(hot_drives, s.hot_drives_per_node))
    read_cap, write_cap = hot_drives * nvme_read_eff, hot_drives * nvme_write_eff
    if s.hot_node_bytes_per_s:
        node_write = s.hot_node_bytes_per_s
        node_read = s.hot_node_read_bytes_per_s or node_write
        by_node = np.maximum(drives_needed(write_req, node_write), drives_needed(read_req, node_read))
        hot_nodes = np.maximum(hot_nodes, by_node)
        read_cap = np.minimum(read_cap, hot_nodes * node_read)
        write_cap = np.minimum(write_cap, hot_nodes * node_write)
    return {
        "read_req": read_req,
        "write_req": write_req,
        "hot_cap": hot_cap,
        "hot_by_cap": by_cap,
        "hot_by_read": by_read,
        "hot_by_write": by_write,
        "hot_drives": hot_drives,
        "hot_nodes": hot_nodes,
        "read_cap": read_cap,
        "write_cap": write_cap,
    }


def _warm_counts(
    ckpt: FloatArray, data: FloatArray, raw_bytes: ArrayLike, inputs: StorageInputs
) -> dict[str, NDArray[Any]]:
    """Warm-tier capacity, archiving write, drives (capacity- or write-bound) and nodes."""
    s, f = inputs, np.asarray
    warm_cap = f(raw_bytes, dtype=np.float64) + data + f(s.archived, dtype=np.float64) * ckpt
    warm_write = ckpt / f(s.checkpoint_interval_s, dtype=np.float64)
    overhead = f(s.warm_overhead, dtype=np.float64)
    w_cap = f(drives_needed(warm_cap * overhead, s.hdd_capacity_bytes * s.max_fill))
    w_write = f(drives_needed(warm_write * overhead, s.hdd_write_bytes_per_s * s.hdd_derating))
    warm_drives = np.maximum(np.maximum(w_cap, w_write), 1)
    return {
        "warm_cap": warm_cap,
        "warm_write": warm_write,
        "warm_by_cap": w_cap,
        "warm_by_write": w_write,
        "warm_drives": warm_drives,
        "warm_nodes": f(drives_needed(warm_drives, s.warm_drives_per_node)),
    }


@dataclass(frozen=True)
class Volumes:
    """What the tiers store, in bytes (floats or arrays): one checkpoint, the tokenized data set,
    the raw corpus; and the stored bytes per token (2 or 4)."""

    checkpoint_bytes: Any
    dataset_bytes: Any
    raw_dataset_bytes: Any
    bytes_per_token: Any


def volumes(
    params_total: ArrayLike, tokens: ArrayLike, vocab_size: ArrayLike, inputs: StorageInputs
) -> Volumes:
    """checkpoint = params x bytes_per_param_checkpoint; tokenized set = tokens x (2 or 4 by the
    vocabulary); raw corpus = tokens x raw_bytes_per_token (design_storage's docstring). Array-friendly:
    the one computation of the plan's storage and the vectorized counts."""
    return Volumes(
        checkpoint_bytes=checkpoint_bytes(params_total, inputs.bytes_per_param_checkpoint),
        dataset_bytes=dataset_bytes(tokens, vocab_size),
        raw_dataset_bytes=np.asarray(tokens, dtype=np.float64) * inputs.raw_bytes_per_token,
        bytes_per_token=tokenized_bytes_per_token(vocab_size),
    )


def storage_counts(vol: Volumes, tokens_per_s: ArrayLike, inputs: StorageInputs) -> dict[str, NDArray[Any]]:
    """Drive and node counts of the hot and warm tiers, numpy-vectorized over the volumes and tokens/s.

    The arithmetic of `design_storage` (see its docstring for formulas and sources), kept in one
    place so a sweep over millions of scenarios and a single plan count the same drives.
    Units: bytes, bytes/s, seconds; counts are int64 arrays. `tokens_per_s` must be finite (a
    scenario without a time has no read demand to size: the caller leaves it out).
    """
    ckpt = np.asarray(vol.checkpoint_bytes, dtype=np.float64)
    data = np.asarray(vol.dataset_bytes, dtype=np.float64)
    data_read = data_read_bytes_per_s(tokens_per_s, vol.bytes_per_token)
    return {
        "data_read": data_read,
        **_hot_counts(ckpt, data, data_read, inputs),
        **_warm_counts(ckpt, data, vol.raw_dataset_bytes, inputs),
    }


def _hot_tier(x: dict[str, float], n: dict[str, int], ckpt: float, inputs: StorageInputs) -> HotTier:
    return HotTier(
        capacity_bytes=x["hot_cap"],
        raw_bytes=x["hot_cap"] * inputs.hot_overhead,
        read_bytes_per_s=x["read_req"],
        write_bytes_per_s=x["write_req"],
        read_capability_bytes_per_s=x["read_cap"],
        write_capability_bytes_per_s=x["write_cap"],
        drives=n["hot_drives"],
        drives_for_capacity=n["hot_by_cap"],
        drives_for_read=n["hot_by_read"],
        drives_for_write=n["hot_by_write"],
        nodes=n["hot_nodes"],
        restart_read_s=ckpt / x["read_cap"],
    )


def _warm_tier(x: dict[str, float], n: dict[str, int], inputs: StorageInputs) -> WarmTier:
    return WarmTier(
        capacity_bytes=x["warm_cap"],
        raw_bytes=x["warm_cap"] * inputs.warm_overhead,
        overhead=inputs.warm_overhead,
        write_bytes_per_s=x["warm_write"],
        drives=n["warm_drives"],
        drives_for_capacity=n["warm_by_cap"],
        drives_for_write=n["warm_by_write"],
        nodes=n["warm_nodes"],
    )


def _cache_tier(data: float, ckpt: float, nodes: int, inputs: StorageInputs) -> CacheTier:
    prefetch = inputs.cache_dataset_fraction * data / nodes
    staging = inputs.local_checkpoint_copies * ckpt / nodes
    per_node = prefetch + staging
    fits = None if inputs.local_nvme_bytes is None else per_node <= inputs.local_nvme_bytes
    return CacheTier(
        per_node_bytes=per_node, prefetch_bytes=prefetch, checkpoint_staging_bytes=staging, fits=fits
    )


def _notes(
    hot: HotTier,
    cache: CacheTier,
    data_read: float,
    tokens_per_s: float,
    bpt: int,
    ckpt: float,
    inputs: StorageInputs,
) -> tuple[str, ...]:
    """What sets each tier, in words (English defaults)."""
    s, notes = inputs, []
    if hot.write_bytes_per_s > data_read:
        notes.append(
            f"Text data needs little read bandwidth: {_gb(data_read)} ({tokens_per_s:.3g} tokens/s x {bpt} B); "
            f"checkpoint writes dominate at {_gb(hot.write_bytes_per_s)} ({ckpt / 1e12:.3g} TB in {s.checkpoint_write_s:g} s)."
        )
    by_cap, by_read, by_write = hot.drives_for_capacity, hot.drives_for_read, hot.drives_for_write
    bound = max((by_cap, "capacity"), (by_read, "read bandwidth"), (by_write, "write bandwidth"))[1]
    notes.append(
        f"Hot tier: {hot.drives} NVMe drives in {hot.nodes} nodes, set by {bound} "
        f"(capacity {by_cap}, read {by_read}, write {by_write})."
    )
    if s.checkpoint_write_s >= s.checkpoint_interval_s:
        notes.append(
            f"The checkpoint write window ({s.checkpoint_write_s:g} s) is not shorter than the interval "
            f"({s.checkpoint_interval_s:g} s): checkpoints would never finish between saves."
        )
    notes.append(
        f"Restart reads one checkpoint back in {hot.restart_read_s:.3g} s at {_gb(hot.read_capability_bytes_per_s)}."
    )
    if cache.fits is False and s.local_nvme_bytes is not None:
        notes.append(
            f"Cache needs {cache.per_node_bytes / 1e12:.3g} TB per node but the node has "
            f"{s.local_nvme_bytes / 1e12:.3g} TB of local NVMe; lower cache_dataset_fraction."
        )
    return tuple(notes)


def design_storage(
    params_total: float,
    tokens: float,
    vocab_size: int,
    tokens_per_s: float,
    nodes: int,
    inputs: StorageInputs = DEFAULT_INPUTS,
) -> Storage:
    """Size the hot, warm and cache tiers of a training cluster (docs/sources.md#source-article §3.4; docs/architecture.md#formulas).

    Inputs: parameters (count), tokens (count), tokens_per_s (tokens/s), nodes (training servers);
    in `inputs` times in s, capacities in bytes, bandwidths in bytes/s. Formulas:
    - checkpoint = params x bytes_per_param_checkpoint (12: fp32 master + Adam m, v; 14 with bf16 weights).
    - tokenized set = tokens x (2 if vocab <= 65,536 else 4); raw corpus = tokens x raw_bytes_per_token
      (~4 B/token of English text, [U], docs/sources.md#storage-sizing).
    - hot capacity = hot_dataset_fraction x tokenized set + checkpoints_kept x checkpoint; write =
      checkpoint / checkpoint_write_s; read = max(tokens/s x bytes/token, checkpoint / restart_target_s).
    - drives = max(capacity-bound, read-bound, write-bound). Capacity-bound: capacity x overhead /
      (drive capacity x max_fill). Bandwidth-bound: per-drive effective bandwidth = data-sheet
      sequential figure x derating (default 0.5 [U]: file-system, network and mixed-I/O losses), and
      writes also pay the protection overhead (parity / replicas are written too).
    - hot nodes = max(drives / hot_drives_per_node, write / hot_node_bytes_per_s and read /
      hot_node_read_bytes_per_s when given); delivered write and read = min(drives' rate, nodes x
      the node's write or read rate).
    - warm capacity = raw corpus + tokenized set + checkpoints_archived x checkpoint (usable), x overhead
      raw; write-bound by archiving one checkpoint per interval.
    - cache per node = cache_dataset_fraction x tokenized set / nodes + local_checkpoint_copies x
      checkpoint / nodes.
    - restart_read_s = checkpoint / delivered hot read bandwidth.
    """
    given = {"params_total": params_total, "tokens": tokens, "vocab_size": vocab_size}
    given |= {"tokens_per_s": tokens_per_s, "nodes": nodes}
    _validate({**asdict(inputs), "checkpoints_archived": inputs.archived, **given}, _POSITIVE, _NONNEG)
    vol = volumes(params_total, tokens, vocab_size, inputs)
    ckpt, data, raw = float(vol.checkpoint_bytes), float(vol.dataset_bytes), float(vol.raw_dataset_bytes)
    bpt = int(vol.bytes_per_token)
    c = storage_counts(vol, tokens_per_s, inputs)
    x = {k: float(v) for k, v in c.items()}  # one scenario: 0-d arrays -> plain numbers
    n = {k: int(v) for k, v in c.items() if v.dtype.kind == "i"}
    hot = _hot_tier(x, n, ckpt, inputs)
    cache = _cache_tier(data, ckpt, nodes, inputs)
    return Storage(
        checkpoint_bytes=ckpt,
        dataset_bytes=data,
        raw_dataset_bytes=raw,
        bytes_per_token=bpt,
        bytes_per_param_checkpoint=float(inputs.bytes_per_param_checkpoint),
        hot=hot,
        warm=_warm_tier(x, n, inputs),
        cache=cache,
        notes=_notes(hot, cache, x["data_read"], tokens_per_s, bpt, ckpt, inputs),
    )
