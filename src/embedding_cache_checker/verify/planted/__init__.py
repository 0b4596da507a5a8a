"""The catalogue of planted bugs: one list, used by the tests and by ``embedding-cache verify``.

Every verification layer must be shown to catch a real bug. The bugs it is
shown on are listed once, here, as ``PlantedBug`` entries in ``PLANTED``; the
contract tests, the stateful and differential tests, CrossHair, the
state-graph replay and trace validation all take them from this list.

Four kinds (``bug.Kind``), three of them in ``PLANTED``:

* ``kind="transition"``: a broken copy of one transition, wearing the real
  contract: of the shared core (``planted.core``), of a lease transition
  (``planted.leases``), or of alloc's admission step or contiguity loop
  (``planted.admission``, ``planted.contiguity``, ``planted.combined``).
  With ``policy=None`` it talks to the policy only through the hooks, so it
  is a bug under every policy (``bug.policies()`` is every name in
  ``EVICTION_POLICIES``); one contiguity bug takes fifo's newest entry, so
  its ``policy`` is "fifo".
* ``kind="policy"``, ``policy`` a name of ``EVICTION_POLICIES``: a broken
  subclass of that policy (``bug.broken_policy``, in ``planted.<policy>``,
  whose ``BUGS`` holds its entries) whose order rule is wrong; the
  transitions are the real ones. ``transition`` names the
  operation whose call shows it (whose contract reports it; the CrossHair
  target).
* ``kind="admission"``, ``policy=None``: a broken subclass of an admission
  filter (``bug.broken_admission``, in ``planted.admission``), run with the
  real transitions. It, and the transition bugs of ``planted.admission``,
  run with ``bug.admission``'s filter.

The fourth, kept apart in ``QUERY_BUGS`` (not in ``PLANTED``): ``kind="query"``,
``policy=None``: a wrong answer from a query (``has_held_entries``) over a
well-formed state. Every layer of ``LAYERS`` reads the state itself (through
``abstraction.abstract_state``, which asks the real query), so all are
blind to it by construction; the callers of the cache's own method catch it:
the counterexample replay of ``embedding-cache tlc --repro`` (and a cache
built with ``bug.cache_class``). ``call`` runs a query step of a witness.

Selecting: ``by_name(name)`` (either tuple); ``for_tla_model(model)`` -- the bug
planting the mistake of a TLA+ bug model; ``for_policy(policy, layer=None)`` -- the bugs
under a policy (shared ones first), optionally only those ``layer`` must
catch (``bug.caught_by(layer)``, ``layer`` in ``LAYERS``); ``pairs(layer)`` --
every (bug, policy) pair, policy by policy.

Building something with a bug (each O(1), but ``cache``/``state``: O(num_blocks)):

* ``bug.operations(checked=False)`` -- every operation by name (as
  ``transitions.OPERATIONS``), the bug's body swapped in for a transition
  bug. ``checked=False``: bare bodies, no contract code in any build (the
  layer under test must catch the bug itself); ``checked=True``: the bodies
  with the build's contracts (the same as bare ones in the default build).
* ``bug.eviction(policy=None, **params)`` -- what ``EmbeddingCache(n,
  eviction=...)`` takes: the broken class for a policy bug, the named real
  policy for a transition bug ("fifo" when None); with ``bug.params`` (the
  bug's own constructor parameters, e.g. gdsf's small ``scale``) updated by
  ``params``.
* ``bug.cache_class(policy=None, checked=False)`` -- an ``EmbeddingCache``
  subclass named after the bug whose transition table (``_ops``) is
  ``operations(checked)`` and whose ``eviction`` defaults to
  ``eviction(policy)``: a drop-in for ``EmbeddingCache`` in the stateful and
  differential tests. ``bug.cache(num_blocks, policy, checked, **params)``
  and ``bug.state(num_blocks, policy, **params)`` build one directly.
* ``bug.plant(state)`` -- put a policy bug into a well-formed state the real
  code built (re-types its policy in place; nothing for a transition bug):
  one broken step from a good state, as CrossHair checks.
* ``run_witness(bug, policy)`` -- the bug's ``witness``: concrete calls on a
  ``witness_blocks`` pool, the real code for all but the last, the bug for
  the last. In the checked build the last call breaks a condition in
  ``bug.expected(policy)``; a bug no contract can see (``"contracts" in
  bug.blind``) instead leaves a different result or abstract state.

Expected names: ``expect`` lists the condition names (spec/NAMES.md) that may
report the bug; ``ORDER`` stands for the running policy's order property
(``EvictionPolicy.order_property``, what ``contracts.order_post``
reports), which ``bug.expected(policy)`` fills in. ``blind`` lists the
layers (``LAYERS``) that cannot catch it, with the reason in ``why_blind``.
``tla_model`` names the TLA+ bug model (tla/models.json) planting the same
mistake, when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any

from embedding_cache.policies import (
    DEFAULT_POLICY,  # re-exported: the tests' default
    EVICTION_POLICIES,
    make_policy,
)
from embedding_cache.verification import LEASE_OPERATIONS, REAL, CacheState, Lease, make_admission

from ...policy_parts import policy_part
from . import admission, combined, contiguity, core, leases
from .bug import (
    LAYERS,
    ORDER,
    Kind,
    PlantedBug,
    PlantedPolicy,
    WitnessCall,
    real_operations,
)


def _policy_bugs(policy: str) -> tuple[PlantedBug, ...]:
    """The planted bugs of ``policy``'s order rule: ``BUGS`` of the module
    ``planted.<policy>``, found by the policy's name. O(its bugs).

    Raises:
        LookupError: a registered policy has no planted-bugs module (every policy
            must show its order rule caught: spec/POLICIES.md section 4).
    """
    bugs = policy_part(__name__, policy, "BUGS", "planted bugs (its order rule's)")
    if not isinstance(bugs, tuple) or not all(isinstance(b, PlantedBug) for b in bugs):
        raise LookupError(f"{__name__}.{policy}.BUGS must be a tuple of PlantedBug")
    return bugs


#: Every planted bug: the shared core's first, then each policy's (registry order).
PLANTED: tuple[PlantedBug, ...] = (
    core.BUGS
    + leases.BUGS
    + admission.BUGS
    + contiguity.BUGS
    + combined.BUGS
    + tuple(bug for policy in EVICTION_POLICIES for bug in _policy_bugs(policy))
)

#: Bugs in a query's answer, which no layer of ``LAYERS`` can see (module docstring).
QUERY_BUGS: tuple[PlantedBug, ...] = core.QUERY_BUGS

_BY_NAME: dict[str, PlantedBug] = {bug.name: bug for bug in (*PLANTED, *QUERY_BUGS)}


def by_name(name: str) -> PlantedBug:
    """The catalogue entry called ``name`` (in ``PLANTED`` or ``QUERY_BUGS``). O(1).

    Raises:
        KeyError: no planted bug has that name.
    """
    return _BY_NAME[name]


def for_tla_model(model: str) -> PlantedBug | None:
    """The catalogue entry planting the mistake of the TLA+ bug model ``model``
    (its ``tla_model``), or None. O(|PLANTED| + |QUERY_BUGS|)."""
    return next((bug for bug in _BY_NAME.values() if bug.tla_model == model), None)


def for_policy(policy: str, layer: str | None = None) -> tuple[PlantedBug, ...]:
    """The bugs under ``policy`` (the shared ones, then its own), optionally only
    those ``layer`` must catch. O(|PLANTED|)."""
    return tuple(
        bug for bug in PLANTED if bug.applies_to(policy) and (layer is None or bug.caught_by(layer))
    )


def pairs(layer: str | None = None) -> Iterator[tuple[PlantedBug, str]]:
    """Every (bug, policy) the bug applies to, policy by policy, optionally only those
    ``layer`` must catch. O(|PLANTED| * policies)."""
    for policy in EVICTION_POLICIES:
        for bug in for_policy(policy, layer):
            yield bug, policy


#: The queries a witness may call (on the whole state: the step's key is unused).
QUERIES = ("has_held_entries",)


def call(
    ops: Mapping[str, Callable[..., Any]],
    s: CacheState,
    step: WitnessCall,
    leases: list[Lease] | None = None,
) -> object:
    """Run one witness call on ``s``; a query or lease call from ``ops`` or, when absent,
    the real one. O(the operation).

    Lease calls read the clock as the state last saw it (0 before any expiry):
    ``("lease", key, seconds)`` appends the lease it grants to ``leases``;
    ``("release_lease", key)`` and ``("renew_lease", key, seconds)`` act on the
    latest lease granted on ``key``; ``("expire_leases", "", now)`` moves the
    clock to ``now``.
    """
    op, key, *n = step
    if op in QUERIES:
        return ops.get(op, getattr(REAL, op))(s)
    if op in LEASE_OPERATIONS:
        return _lease_call(
            ops.get(op, getattr(REAL, op)), s, step, [] if leases is None else leases
        )
    return ops[op](s, key, *n)


def _lease_call(
    func: Callable[..., Any], s: CacheState, step: WitnessCall, leases: list[Lease]
) -> object:
    op, key, *n = step
    now = max(s.leases.now, 0.0)
    if op == "expire_leases":
        return func(s, float(n[0]))
    if op == "lease":
        granted = func(s, key, n[0], now)
        if isinstance(granted, Lease):
            leases.append(granted)
        return granted
    lease = next(held for held in reversed(leases) if held.key == key)
    return func(s, lease, n[0], now) if op == "renew_lease" else func(s, lease)


def run_witness(
    bug: PlantedBug,
    policy: str | None = None,
    *,
    planted: bool = True,
    checked: bool = True,
    **params: Any,
) -> tuple[object, CacheState]:
    """Run ``bug``'s witness under ``policy``: the real code, then the last call with the bug.

    Builds a ``witness_blocks`` pool with the real policy (``bug.params``
    updated by ``params``), runs every call but the last with the real
    operations, plants the bug (unless ``planted`` is False: a control run) and
    runs the last call. Returns its result and the state; a contract
    violation propagates. ``checked``: with the build's contracts, else bare
    bodies. O(witness).
    """
    name = policy or bug.policy or DEFAULT_POLICY
    bug.expected(name)  # validates the policy
    real = real_operations(checked)
    spec = partial(EVICTION_POLICIES[name], **{**bug.params, **params})
    s = CacheState(
        bug.witness_blocks,
        make_policy(spec, bug.witness_blocks),
        bug.allocator,
        make_admission(bug.admission, bug.witness_blocks),  # the real filter
        bug.contiguity,
    )
    granted: list[Lease] = []
    for step in bug.witness[:-1]:
        call(real, s, step, granted)
    ops = real
    if planted:
        bug.plant(s)
        ops = bug.operations(checked)
    return call(ops, s, bug.witness[-1], granted), s


__all__ = [
    "DEFAULT_POLICY",
    "LAYERS",
    "ORDER",
    "PLANTED",
    "QUERIES",
    "QUERY_BUGS",
    "Kind",
    "PlantedBug",
    "PlantedPolicy",
    "WitnessCall",
    "by_name",
    "call",
    "for_policy",
    "for_tla_model",
    "pairs",
    "real_operations",
    "run_witness",
]
