"""What a policy's checker-side adapter gives, and the bounds of the states CrossHair builds.

A policy's adapter (``ADAPTER`` of ``embedding_cache_checker.verify.planted.<name>``,
one module per name in ``embedding_cache.EVICTION_POLICIES``) says what the checker must know
about that policy and cannot derive from the runtime class: its CrossHair
part (how ``crosshair_plugin.build_state`` lays a handful of bounded ints,
"choices", onto the policy's own structures, the bounds of those choices, and
the inverse, the choices that rebuild a state the real transitions reached,
which the tests use to show that every small reachable state is built), and
the conditions of its own that the replay states on a step
(``verify.transition_properties``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from embedding_cache.policies import EvictionPolicy

if TYPE_CHECKING:
    from ..verify.transition_properties import TransitionPredicate

#: Largest pool CrossHair builds: 4 blocks already lets an alloc evict two entries.
MAX_BLOCKS = 4
#: Most entries in a built state: enough for a victim, a survivor and a held entry.
MAX_ENTRIES = 3
#: Highest pin count: 2 lets an unpin leave the entry pinned.
MAX_PIN = 2
#: The keys of built states, in the order the policies list them.
KEYS = tuple(f"k{i}" for i in range(MAX_ENTRIES))

#: A choice's (low, high) bound; high None: unbounded above.
Bound = tuple[int, int | None]
#: (key, size, pin count) of each entry of a state being built, in key order (KEYS).
Entries = Sequence[tuple[str, int, int]]
#: Lays choices onto a fresh policy that already holds nothing: (policy, entries, choices).
Builder = Callable[[EvictionPolicy, Entries, Sequence[int]], None]
#: The choices that rebuild a policy, given its keys in build order and their sizes, and
#: the renaming of any keys of its own (s3fifo's ghost keys) onto the built ones.
Preimage = Callable[
    [EvictionPolicy, Sequence[str], Sequence[int]], tuple[list[int], dict[str, str]]
]


@dataclass(frozen=True)
class PolicyAdapter:
    """One policy's checker side: how CrossHair builds its state, and back."""

    #: The policy's name in ``EVICTION_POLICIES``.
    name: str
    #: What built states' policies are made with (num_blocks -> policy): the runtime
    #: class, or it with small parameters so counterexamples read easily.
    factory: Callable[[int], EvictionPolicy]
    #: The bound of each choice ``build`` reads, in order (empty: the policy has no
    #: state beyond which keys it holds).
    choice_bounds: tuple[Bound, ...]
    #: Lays the choices onto the policy; every evictable entry (pin 0) must end up held.
    build: Builder
    #: The policy's evictable keys in the order ``build`` lists them (key order): the
    #: relabelling that maps a reached state onto a built one.
    listed: Callable[[EvictionPolicy], list[str]]
    #: The inverse of ``build``, up to key names (see ``Preimage``).
    preimage: Preimage
    #: Pairs (i, j): choice i is at most choice j (besides each one's own bounds).
    at_most: tuple[tuple[int, int], ...] = ()
    #: The policy's own conditions stated on one step of the code, by their one name
    #: (spec/NAMES.md), beside its order property (``verify.transition_properties``).
    transition_properties: Mapping[str, TransitionPredicate] = field(default_factory=dict)


def pad(values: Sequence[int], fill: int, length: int = MAX_ENTRIES) -> list[int]:
    """``values`` padded with ``fill`` to ``length`` (one per possible entry). O(length)."""
    return [*values, *([fill] * (length - len(values)))]
