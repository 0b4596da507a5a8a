"""Run the linearizability check on the real cache and on the mutants, and report figures.

``linearizability_report`` is the entry point (no CLI of its own): for each
policy it records ``histories`` random histories of the real cache and checks
each one, then, for each mutant, records histories until one is found not
linearizable (at most ``mutant_budget``). Its dict is JSON-ready; ``ok`` is
True only if every history of the real cache is linearizable and passes the
final invariant sweep, and every mutant is caught.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from embedding_cache import EmbeddingCache
from embedding_cache.policies import EVICTION_POLICIES

from .checker import MAX_CONFIGURATIONS, LinResult, check_calls
from .history import LEASE_OPERATIONS, History, SteppingClock, overlaps, random_plan, record_history
from .mutants import MUTANTS

#: Cache size and shared keys of every history: small, so calls collide.
NUM_BLOCKS = 4
KEYS = 3
#: Histories tried per mutant before it counts as missed. A hunt stops at its first
#: catch, so this costs only on a miss. The slowest mutant to catch is
#: split_release_lease (its race needs another call's clock reading to make the lease
#: due inside the window), and a tenth of this budget once missed it under CI's load;
#: the budget is many times the latest catch measured (docs/MEASURED.md,
#: "Linearizability: the mutant budget"), so a miss means a caught-no-longer mutant, not
#: bad luck.
MUTANT_BUDGET = 2000


class CacheFactory(Protocol):
    """Builds the cache a history runs on (``EmbeddingCache`` or a mutant class is one)."""

    def __call__(
        self, num_blocks: int, eviction: str, *, clock: Callable[[], float]
    ) -> EmbeddingCache: ...


@dataclass(frozen=True)
class CheckedHistory:
    """One recorded and checked history."""

    history: History
    verdict: LinResult
    record_seconds: float
    check_seconds: float


def run_one(
    factory: CacheFactory,
    policy: str,
    rng: random.Random,
    *,
    threads: int = 8,
    ops_per_thread: int = 8,
    num_blocks: int = NUM_BLOCKS,
    keys: int = KEYS,
    max_configurations: int = MAX_CONFIGURATIONS,
) -> CheckedHistory:
    """Record one random history on a fresh cache and check it. See ``checker`` for the cost."""
    plan = random_plan(rng, threads, ops_per_thread, keys, num_blocks)
    clock = SteppingClock()
    t0 = time.perf_counter()
    history = record_history(factory(num_blocks, policy, clock=clock), plan, clock=clock)
    t1 = time.perf_counter()
    verdict = check_calls(history.calls, num_blocks, policy, max_configurations=max_configurations)
    return CheckedHistory(history, verdict, t1 - t0, time.perf_counter() - t1)


def hunt(
    factory: CacheFactory,
    policy: str,
    *,
    budget: int = MUTANT_BUDGET,
    seed: int = 0,
    **options: Any,
) -> tuple[int, CheckedHistory | None]:
    """Record histories until one is not linearizable; (histories tried, that one or None).

    For mutants: at most ``budget`` histories. ``options`` go to ``run_one``.
    """
    for i in range(budget):
        checked = run_one(factory, policy, random.Random(f"{seed}/{policy}/hunt/{i}"), **options)
        if checked.verdict.linearizable is False:
            return i + 1, checked
    return budget, None


#: The report's counter for each verdict.
_COUNTED_AS = {True: "linearizable", False: "not_linearizable", None: "undecided"}


def _real(num_blocks: int, eviction: str, *, clock: Callable[[], float]) -> EmbeddingCache:
    return EmbeddingCache(num_blocks, eviction=eviction, clock=clock)


def linearizability_report(
    policies: Sequence[str] | None = None,
    histories: int = 40,
    threads: int = 8,
    ops_per_thread: int = 8,
    seed: int = 0,
    *,
    mutants: Mapping[str, type[EmbeddingCache]] | None = None,
    mutant_budget: int = MUTANT_BUDGET,
    num_blocks: int = NUM_BLOCKS,
    keys: int = KEYS,
    max_configurations: int = MAX_CONFIGURATIONS,
) -> dict[str, Any]:
    """Check ``histories`` histories of the real cache per policy, and hunt every mutant.

    ``policies`` defaults to every name in ``EVICTION_POLICIES``, ``mutants``
    to ``mutants.MUTANTS`` (each hunted under every policy). Cost: about
    (histories + histories spent on mutants) x (recording, ~ms, plus checking:
    see ``checker``).
    """
    names = list(EVICTION_POLICIES) if policies is None else list(policies)
    chosen = MUTANTS if mutants is None else mutants
    options: dict[str, Any] = {
        "threads": threads,
        "ops_per_thread": ops_per_thread,
        "num_blocks": num_blocks,
        "keys": keys,
        "max_configurations": max_configurations,
    }
    per_policy: dict[str, dict[str, Any]] = {}
    for policy in names:
        row: dict[str, Any] = {
            "histories": 0,
            "linearizable": 0,
            "not_linearizable": 0,
            "undecided": 0,
            "operations": 0,
            "lease_calls": 0,
            "expired": 0,
            "overlapping_pairs": 0,
            "overlapping_calls": 0,
            "configurations": 0,
            "sweep_failures": 0,
            "record_seconds": 0.0,
            "check_seconds": 0.0,
            "max_check_seconds": 0.0,
            "witness": None,
        }
        start = time.perf_counter()
        for i in range(histories):
            checked = run_one(_real, policy, random.Random(f"{seed}/{policy}/{i}"), **options)
            v = checked.verdict
            row[_COUNTED_AS[v.linearizable]] += 1
            row["histories"] += 1
            row["operations"] += v.calls
            calls = checked.history.calls
            row["lease_calls"] += sum(c.op in LEASE_OPERATIONS for c in calls)
            row["expired"] += sum(c.op == "expire_leases" and bool(c.outcome) for c in calls)
            pairs, touched = overlaps(checked.history.calls)
            row["overlapping_pairs"] += pairs
            row["overlapping_calls"] += touched
            row["configurations"] += v.configurations
            row["sweep_failures"] += checked.history.sweep_error is not None
            row["record_seconds"] += checked.record_seconds
            row["check_seconds"] += checked.check_seconds
            row["max_check_seconds"] = max(row["max_check_seconds"], checked.check_seconds)
            if v.linearizable is False and row["witness"] is None:
                row["witness"] = v.explain()
        row["seconds"] = time.perf_counter() - start
        per_policy[policy] = row
    caught: dict[str, dict[str, Any]] = {}
    for name, cls in chosen.items():
        caught[name] = {}
        for policy in names:
            start = time.perf_counter()
            tried, found = hunt(cls, policy, budget=mutant_budget, seed=seed, **options)
            caught[name][policy] = {
                "caught": found is not None,
                "histories": tried,
                "sweep_failed": found is not None and found.history.sweep_error is not None,
                "seconds": time.perf_counter() - start,
                "witness": None if found is None else found.verdict.explain(),
            }
    real_ok = all(
        r["linearizable"] == r["histories"] and not r["sweep_failures"] for r in per_policy.values()
    )
    mutants_caught = sum(all(p["caught"] for p in m.values()) for m in caught.values())
    return {
        "threads": threads,
        "ops_per_thread": ops_per_thread,
        "num_blocks": num_blocks,
        "keys": keys,
        "seed": seed,
        "policies": per_policy,
        "mutants": caught,
        "mutants_caught": mutants_caught,
        "mutants_total": len(caught),
        "ok": real_ok and mutants_caught == len(caught),
    }


def format_report(report: Mapping[str, Any]) -> str:
    """The report as a short table, one row per policy and one per mutant."""
    lines = [
        f"linearizability: {report['threads']} threads x {report['ops_per_thread']} calls, "
        f"{report['keys']} keys, {report['num_blocks']} blocks"
    ]
    for policy, r in report["policies"].items():
        lines.append(
            f"  {policy:8} {r['linearizable']}/{r['histories']} histories linearizable, "
            f"{r['operations']} calls ({r['lease_calls']} on leases; "
            f"{r['overlapping_calls']} overlapping another), "
            f"{r['configurations']} configurations, "
            f"sweep failures {r['sweep_failures']}, {r['seconds']:.1f}s "
            f"(check {r['check_seconds']:.2f}s, max {r['max_check_seconds'] * 1000:.0f} ms)"
        )
    for name, per in report["mutants"].items():
        cells = ", ".join(
            f"{policy} {'caught' if m['caught'] else 'MISSED'} after {m['histories']}"
            for policy, m in per.items()
        )
        lines.append(f"  mutant {name}: {cells}")
    lines.append(f"linearizability: {'ok' if report['ok'] else 'FAILED'}")
    return "\n".join(lines)
