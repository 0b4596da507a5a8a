"""The worker, as the scheduler sees it: which transfers it makes and what it reports.

vLLM's worker saves only the encoder outputs the model runner computed this
step (``save_caches`` per new output, looked up in ``meta.saves``), loads every
item of ``meta.loads``, and reports the copies that completed in its next
``ECCPUWorkerMetadata``: the saved keys (once: one rank saves) and each load's
transfer id once per rank. Here every copy completes at once and its report is
delivered ``report_delay`` steps later (1: before the next step's checks, as
vLLM's ``update_from_output`` runs). Faults, each drawn from a seeded RNG: a
load's report lost (one rank's, so the count never reaches zero), a save that
fails (never reported).

The worker also checks the blocks: a save must not write blocks that a
transfer still in flight (not yet reported) reads or writes, and a load must not
read blocks a save in flight writes (``reused_in_flight``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Faults:
    """How reports are delayed or lost."""

    report_delay: int = 1
    lost_load_reports: float = 0.0
    failed_saves: float = 0.0
    seed: int = 0


@dataclass
class WorkerStep:
    """What the worker did with one step's meta."""

    saves_made: list[str] = field(default_factory=list)
    #: Saves in the meta for items the engine did not compute this step: never made.
    saves_never_made: list[str] = field(default_factory=list)
    saves_failed: list[str] = field(default_factory=list)
    loads: list[int] = field(default_factory=list)
    lost_load_reports: list[int] = field(default_factory=list)
    reused_in_flight: int = 0


@dataclass
class _Report:
    saves: list[str]
    loads: list[int]
    #: Blocks this report's transfers held in flight, by (kind, key or id).
    flights: list[tuple[str, object]]


class Worker:
    """Makes each step's transfers and delivers their reports later. O(blocks) per step."""

    def __init__(self, faults: Faults, ranks: int) -> None:
        if faults.report_delay < 1:
            raise ValueError("report_delay must be >= 1 (reports come after the step)")
        self.faults = faults
        self.ranks = ranks
        self._rng = random.Random(f"{faults.seed}:worker")
        self._pending: dict[int, _Report] = {}
        self._writes: dict[object, frozenset[int]] = {}
        self._reads: dict[object, frozenset[int]] = {}

    def run(self, step: int, meta: Any, computed: set[str]) -> WorkerStep:
        """Make the transfers of ``meta`` (an ``ECCPUConnectorMetadata``); their report
        is due at ``step + report_delay``."""
        done = WorkerStep()
        report = _Report([], [], [])
        for key, block_ids in meta.saves.items():
            if key not in computed:
                done.saves_never_made.append(key)
                continue
            blocks = frozenset(block_ids)
            done.reused_in_flight += self._clashes(blocks, self._writes, self._reads)
            if self.faults.failed_saves and self._rng.random() < self.faults.failed_saves:
                done.saves_failed.append(key)  # the copy may have run; it is never reported
                continue
            self._writes[key] = blocks
            report.flights.append(("save", key))
            report.saves.append(key)
            done.saves_made.append(key)
        for transfer_id, block_ids, _shape in meta.loads.values():
            blocks = frozenset(block_ids)
            done.reused_in_flight += self._clashes(blocks, self._writes)
            self._reads[transfer_id] = blocks
            report.flights.append(("load", transfer_id))
            done.loads.append(transfer_id)
            reports = [transfer_id] * self.ranks
            if self.faults.lost_load_reports and self._rng.random() < self.faults.lost_load_reports:
                reports.pop()
                done.lost_load_reports.append(transfer_id)
            report.loads.extend(reports)
        self._pending[step + self.faults.report_delay] = report
        return done

    @staticmethod
    def _clashes(blocks: frozenset[int], *flights: dict[object, frozenset[int]]) -> int:
        return sum(not blocks.isdisjoint(other) for held in flights for other in held.values())

    def due(self, step: int) -> list[tuple[list[str], list[int]]]:
        """The reports due at ``step`` (saves, load ids), their transfers over."""
        report = self._pending.pop(step, None)
        return [] if report is None else self._deliver([report])

    def drain(self) -> list[tuple[list[str], list[int]]]:
        """Every report still pending, in the order they fell due."""
        reports = [self._pending.pop(step) for step in sorted(self._pending)]
        return self._deliver(reports)

    def _deliver(self, reports: Iterable[_Report]) -> list[tuple[list[str], list[int]]]:
        out = []
        for report in reports:
            for kind, key in report.flights:
                (self._writes if kind == "save" else self._reads).pop(key, None)
            if report.saves or report.loads:
                out.append((report.saves, report.loads))
        return out
