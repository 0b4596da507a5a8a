"""Each policy's conformance plan, derived from the registry and the manifest (never listed).

The two lists of policies are ``embedding_cache.EVICTION_POLICIES`` (name ->
class) and tla/models.json; this module reads the second for the first. A
policy's plan comes from the manifest's conformance fields (the rule is in
the manifest's ``comment``):

* ``replay`` on an entry (of ``models`` or ``replay_models``): its state graph
  is replayed on the code of the entry's ``policy``; ``"full"`` (every edge) or
  ``"bounded"`` (cut at a depth; skipped with ``--no-deep``). Manifest order,
  the first being the policy's headline.
* ``planted_replay`` true on exactly one replayed entry per policy: the model
  the planted bugs are replayed on; that entry also has ``trace_module`` (the
  policy's TLA+ module, which the generated ``TracePolicy`` instantiates) and
  ``trace_params`` (the Python constructor parameters traces are recorded with).
* ``lease_replay`` true on a lease model's replay input (MCReplayLease<Policy>):
  its graph has the lease calls. ``planted_replay`` true on at most one of a
  policy's lease replay inputs: the model the planted lease bugs are replayed on
  (the one above is then the others'); no ``trace_module`` there.
* ``admission`` (a filter's name) or ``allocator`` with ``rule_params`` (the rule's
  TLA+ constants: ``DoorCapacity``, ``Contiguity``) on a replay input of an alloc
  rule (MCReplayAdmission<Policy>, MCReplayContiguity<Policy>): the code's cache runs
  that rule (``alloc_rule.AllocRule``; with contiguity, block-exact). ``planted_replay``
  true on at most one of a policy's replay inputs of each rule: the model the planted
  bugs of that rule are replayed on (``planted.admission``, ``planted.contiguity``).

What is not in the manifest (seeds, steps, threads) is a constant here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embedding_cache.policies import EVICTION_POLICIES

from ..tlc.manifest import MANIFEST_NAME, ManifestError
from ..tlc.manifest import manifest_entries as read_entries

#: Seeds and length of the clean sequential traces recorded per policy.
SEQUENTIAL_SEEDS = (1, 2, 3)
SEQUENTIAL_STEPS = 1000
#: Seeds and length of the clean sequential traces with leases (workloads.lease_trace).
LEASE_SEEDS = (1, 2)
LEASE_STEPS = 400
#: Seeds of the clean threaded traces, their threads and calls per thread.
THREADED_SEEDS = (1, 2)
THREADS = 4
STEPS_PER_THREAD = 250

#: The values of ``replay``.
FULL, BOUNDED = "full", "bounded"
#: The manifest's sections holding model entries (replay inputs are not checked by ``tlc``).
SECTIONS = ("models", "replay_models")
#: What a replayed entry drives on the code (``entry_rule``): the seed's calls, leases, or an
#: alloc rule.
CORE, LEASE, ADMISSION, CONTIGUITY = "core", "lease", "admission", "contiguity"


class PlanError(ManifestError):
    """The manifest lacks (or garbles) what a policy's conformance plan needs."""


@dataclass(frozen=True)
class PolicyPlan:
    """What the conformance links run for one policy (sized for the ci profile's run time)."""

    policy: str
    #: Replay models whose whole state graph must replay with no mismatch (the first
    #: is the policy's headline).
    full_replay: tuple[str, ...]
    #: Replay models cut at a depth their config sets (the frontier is not expanded), or
    #: at the profile's ``replay_depth`` when it sets one (nightly: 5, a 4x larger graph);
    #: skipped when ``VerifyOptions.deep`` is off (fifo's MCReplayDeep; its TLC
    #: time: docs/MEASURED.md, "The deep replay's depth").
    bounded_replay: tuple[str, ...]
    #: The model whose graph each planted bug is replayed on (one of the above).
    planted: str
    #: The policy's TLA+ module (``TracePolicy`` instantiates it for trace validation).
    trace_module: str
    #: The traced policy's constructor parameters (gdsf: TLC's integers are 32-bit).
    trace_params: Mapping[str, int] = field(default_factory=dict)
    #: The TLA+ constants of the policy's module: the names its models' ``policy_params``
    #: set (the code policy's attribute of each: ``model_code.code_name``).
    tla_constants: tuple[str, ...] = ()
    #: The lease replay input the planted lease bugs are replayed on (None: none is).
    planted_lease: str | None = None
    #: The admission replay input the planted admission bugs are replayed on (None: none is).
    planted_admission: str | None = None
    #: The contiguity replay input the planted contiguity bugs are replayed on (None: none is).
    planted_contiguity: str | None = None
    sequential_seeds: tuple[int, ...] = SEQUENTIAL_SEEDS
    sequential_steps: int = SEQUENTIAL_STEPS
    lease_seeds: tuple[int, ...] = LEASE_SEEDS
    lease_steps: int = LEASE_STEPS
    threaded_seeds: tuple[int, ...] = THREADED_SEEDS
    threads: int = THREADS
    steps_per_thread: int = STEPS_PER_THREAD

    @property
    def planted_models(self) -> tuple[str, ...]:
        """Every model a planted bug of this policy is replayed on. O(1)."""
        chosen = (self.planted, self.planted_lease, self.planted_admission, self.planted_contiguity)
        return tuple(name for name in chosen if name is not None)

    @property
    def replayed(self) -> tuple[tuple[str, bool], ...]:
        """(model, full) of every replay model, the full ones first. O(models)."""
        return tuple((m, True) for m in self.full_replay) + tuple(
            (m, False) for m in self.bounded_replay
        )


def plan_entries(tla_dir: Path) -> list[dict[str, Any]]:
    """Every raw entry of the manifest (``models``, then ``replay_models``), each
    policy's included (``tlc.manifest.manifest_entries``). O(entries).

    Raises:
        PlanError: the manifest or a policy entry cannot be read or is malformed.
    """
    try:
        return read_entries(tla_dir)
    except ManifestError as exc:
        raise PlanError(str(exc)) from exc


def _where(tla_dir: Path) -> str:
    return str(tla_dir / MANIFEST_NAME)


def _replay_kind(entry: Mapping[str, Any], tla_dir: Path) -> str | None:
    kind = entry.get("replay")
    if kind is not None and kind not in (FULL, BOUNDED):
        raise PlanError(
            f"{_where(tla_dir)}: {entry.get('name')}: replay must be {FULL!r} or "
            f"{BOUNDED!r}, not {kind!r}"
        )
    return None if kind is None else str(kind)


def _trace_params(entry: Mapping[str, Any], tla_dir: Path) -> dict[str, int]:
    params = entry.get("trace_params", {})
    if not isinstance(params, dict) or not all(type(v) is int for v in params.values()):
        raise PlanError(
            f"{_where(tla_dir)}: {entry.get('name')}: trace_params must map names to integers"
        )
    return {str(k): v for k, v in params.items()}


def entry_rule(entry: Mapping[str, Any]) -> str:
    """What a replayed entry drives on the code: ``LEASE`` (``lease_replay``), ``ADMISSION``
    (an ``admission`` filter), ``CONTIGUITY`` (an ``allocator`` or a ``Contiguity`` in its
    ``rule_params``), else ``CORE``. O(1)."""
    if entry.get("lease_replay"):
        return LEASE
    if entry.get("admission") is not None:
        return ADMISSION
    if entry.get("allocator") is not None or "Contiguity" in (entry.get("rule_params") or {}):
        return CONTIGUITY
    return CORE


def _replayed(policy: str, mine: list[Mapping[str, Any]], tla_dir: Path) -> list[tuple[str, str]]:
    """(name, replay kind) of ``policy``'s replayed entries, in manifest order.

    Raises:
        PlanError: a bad ``replay`` value, or no full replay model at all.
    """
    replayed = [(str(e["name"]), str(_replay_kind(e, tla_dir))) for e in mine if "replay" in e]
    if not any(kind == FULL for _, kind in replayed):
        raise PlanError(
            f"policy {policy!r} has no replay model in {_where(tla_dir)}: add its replay input "
            f'under replay_models with "policy": {policy!r} and "replay": {FULL!r} (and its '
            f"tla/ module and config; tla/README.md, 'For the conformance checks')"
        )
    return replayed


def _planted_entry(policy: str, mine: list[Mapping[str, Any]], tla_dir: Path) -> Mapping[str, Any]:
    """``policy``'s one replayed entry with ``planted_replay`` true, which has a
    ``trace_module``.

    Raises:
        PlanError: none or several such entries, or it has no ``trace_module``.
    """
    where = _where(tla_dir)
    planted = [
        e
        for e in mine
        if "replay" in e and e.get("planted_replay") is True and entry_rule(e) == CORE
    ]
    if len(planted) != 1:
        names = [str(e["name"]) for e in planted]
        raise PlanError(
            f'policy {policy!r} needs exactly one replayed entry with "planted_replay": true '
            f"in {where} (the model its planted bugs are replayed on); it has {names}"
        )
    entry = planted[0]
    module = entry.get("trace_module")
    if not isinstance(module, str) or not module:
        raise PlanError(
            f"{where}: {entry['name']} (policy {policy!r}'s planted_replay entry) has no "
            f'trace_module: the policy\'s TLA+ module, e.g. "EmbeddingCacheFifo"'
        )
    return entry


def _planted_of(rule: str, policy: str, mine: list[Mapping[str, Any]], tla_dir: Path) -> str | None:
    """``policy``'s replay input of ``rule`` (``entry_rule``: lease, admission or
    contiguity) with ``planted_replay`` true, if any.

    Raises:
        PlanError: several such entries.
    """
    planted = [
        str(e["name"])
        for e in mine
        if "replay" in e and entry_rule(e) == rule and e.get("planted_replay") is True
    ]
    if len(planted) > 1:
        raise PlanError(
            f'policy {policy!r} has several {rule} replay inputs with "planted_replay": true '
            f"in {_where(tla_dir)}: {planted}"
        )
    return planted[0] if planted else None


def plan_for(policy: str, tla_dir: Path, entries: Iterable[Mapping[str, Any]] = ()) -> PolicyPlan:
    """``policy``'s plan, from the manifest's conformance fields (``entries``: the manifest's,
    read from ``tla_dir`` when empty). O(entries).

    Raises:
        PlanError: the policy is not in ``EVICTION_POLICIES``, or the manifest lacks one of
            its parts (a replayed model, the planted-replay entry, its ``trace_module``),
            naming what is missing.
    """
    if policy not in EVICTION_POLICIES:
        raise PlanError(f"unknown policy {policy!r}; choose from {tuple(EVICTION_POLICIES)}")
    listed = list(entries) or plan_entries(tla_dir)
    mine = [e for e in listed if e.get("policy") == policy]
    replayed = _replayed(policy, mine, tla_dir)
    entry = _planted_entry(policy, mine, tla_dir)
    constants = dict.fromkeys(k for e in mine for k in e.get("policy_params") or {})
    return PolicyPlan(
        policy=policy,
        full_replay=tuple(name for name, kind in replayed if kind == FULL),
        bounded_replay=tuple(name for name, kind in replayed if kind == BOUNDED),
        planted=str(entry["name"]),
        trace_module=str(entry["trace_module"]),
        trace_params=_trace_params(entry, tla_dir),
        tla_constants=tuple(constants),
        planted_lease=_planted_of(LEASE, policy, mine, tla_dir),
        planted_admission=_planted_of(ADMISSION, policy, mine, tla_dir),
        planted_contiguity=_planted_of(CONTIGUITY, policy, mine, tla_dir),
    )


def load_plans(tla_dir: Path, policies: Iterable[str] | None = None) -> dict[str, PolicyPlan]:
    """The plan of each of ``policies`` (default: every policy of the registry). O(entries *
    policies).

    Raises:
        PlanError: as ``plan_for``, for the first policy whose plan is incomplete.
    """
    entries = plan_entries(tla_dir)
    chosen = tuple(EVICTION_POLICIES) if policies is None else tuple(policies)
    return {policy: plan_for(policy, tla_dir, entries) for policy in chosen}
