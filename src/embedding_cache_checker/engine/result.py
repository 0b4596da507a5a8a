"""What a run counts, what it records per step, and the state it ends in."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Counters:
    """Totals over the run (the drain included)."""

    steps: int = 0
    requests: int = 0
    unscheduled: int = 0
    checks: int = 0
    #: Checks that answered True (the item is loaded, not computed).
    hits: int = 0
    #: Checked hits scheduled for a load that the step's meta does not load.
    checked_hits_lost: int = 0
    computed: int = 0
    loads: int = 0
    saves: int = 0
    #: Blocks of the saves dispatched (more than the pool: it evicted).
    saved_blocks: int = 0
    #: Saves dispatched for items the engine did not compute that step: never made.
    saves_never_made: int = 0
    saves_failed: int = 0
    lost_load_reports: int = 0
    #: Transfers whose blocks a transfer still in flight was using (0 when correct).
    reused_in_flight: int = 0
    #: The scheduler's time per step (every scheduler call of the step), seconds.
    step_seconds: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class EndState:
    """The cache after the drain: what stays held, and whether vLLM would keep stepping."""

    #: Entries still not ready (saves nobody will report): held for ever.
    never_ready: int
    never_ready_blocks: int
    #: Entries not ready or pinned, and their blocks.
    held_entries: int
    held_blocks: int
    #: ``has_pending_push_work()``: vLLM keeps stepping while it is True.
    pending_push_work: bool


def held_entries(cache: Any, keys: Iterable[str]) -> tuple[int, int, int, int]:
    """Of ``keys``, the entries ``cache`` holds (not ready, or pinned), read through
    its ``get``: (never ready, their blocks, held, their blocks). O(keys)."""
    never_ready = never_ready_blocks = held = held_blocks = 0
    for key in keys:
        entry = cache.get(key)
        if entry is None or entry.evictable:
            continue
        held += 1
        held_blocks += len(entry.block_ids)
        if not entry.ready:
            never_ready += 1
            never_ready_blocks += len(entry.block_ids)
    return never_ready, never_ready_blocks, held, held_blocks


@dataclass(frozen=True)
class StepRecord:
    """One step's ``meta.saves`` and ``meta.loads``: keys and transfer ids, and a digest
    of everything (block ids and shapes included, in the meta's order); the block ids
    themselves when the run keeps them."""

    step: int
    saves: tuple[str, ...]
    loads: tuple[tuple[str, int], ...]
    digest: str
    detail: tuple[Any, ...] | None = None


def step_record(step: int, meta: Any, keep_block_ids: bool) -> StepRecord:
    """The record of ``meta`` (an ``ECCPUConnectorMetadata``). O(block ids)."""
    saves = list(meta.saves.items())
    loads = list(meta.loads.items())
    h = hashlib.blake2b(digest_size=16)
    for key, block_ids in saves:
        h.update(f"save {key} {len(block_ids)}:".encode())
        h.update(array("q", block_ids).tobytes())
    for key, (transfer_id, block_ids, shape) in loads:
        h.update(f"load {key} {transfer_id} {tuple(shape)} {len(block_ids)}:".encode())
        h.update(array("q", block_ids).tobytes())
    digest = h.hexdigest()
    return StepRecord(
        step,
        tuple(meta.saves),
        tuple((key, load[0]) for key, load in loads),
        digest,
        (tuple(saves), tuple(loads)) if keep_block_ids else None,
    )


def first_difference(a: list[StepRecord], b: list[StepRecord]) -> str | None:
    """None when the two runs' metas are identical step for step; else where they part."""
    for left, right in zip(a, b, strict=False):
        if left.digest != right.digest:
            return f"step {left.step}: {left} != {right}"
    if len(a) != len(b):
        return f"{len(a)} steps != {len(b)} steps"
    return None
