"""The eviction-policy interface: what the cache tells a policy, and what it asks of it.

The cache keeps the accounting every policy shares (blocks, pins, fail-fast,
the evictable-block counter: spec/SPEC.md section 6); a policy owns only its
ordering structure. It is told of the events that change the evictable set
E = {ready, unpinned entries} and of uses, and names the next victim. Every
hook runs with the cache's lock held, so a policy needs no locking of its own.

The events (``admit``, ``forget``, ``ready``, ``hold``, ``hit``, ``release``,
``evict``), when each is called and its TLA+ counterpart have one table:
spec/POLICIES.md section 1.

``get`` is not a use: vLLM calls it for bookkeeping in many places, so
counting it would over-count hits (spec/POLICIES.md).

The verification half is a separate class, ``PolicyChecks``: each policy
module defines one beside its policy (``FifoChecks`` beside ``FifoPolicy``)
and names it in the policy's ``checks_class``. It is what the checked build's
contracts, the invariant sweep and the conformance checks read
(``plan_victims``, ``plan_holds``, ``joined_ok``, ``used_ok``, ``abstract``,
``check``, ``clone``), written from the rule's text and not from the hooks; none of it
runs in the default build's hot path, and a planted bug that breaks a hook
is judged by the real policy's checks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

#: Looks up the block count of a live key (the cache's entries).
SizeOf = Callable[[str], int]

#: Asked by ``plan_victims`` once enough blocks would be free, with the victims
#: planned so far: plan one more? (Contiguity's rule: spec/SPEC.md section 14.)
MoreVictims = Callable[[Sequence[str]], bool]


class Hooks(NamedTuple):
    """The event hooks, bound once at construction so a transition pays one call.

    ``admit``, ``forget`` and ``hit`` are None when the policy ignores the event
    (the transition then skips the call).
    """

    ready: Callable[[str, int], object]
    release: Callable[[str, int], object]
    hold: Callable[[str], object]
    hit: Callable[[str], object] | None
    admit: Callable[[str, int], object] | None
    forget: Callable[[str], object] | None
    #: Evicts one victim and returns a pair whose first item is its key (fifo
    #: binds ``OrderedDict.popitem`` itself, which returns (key, size)).
    evict: Callable[[], tuple[str, object]]
    evictable_count: Callable[[], int]


class VictimPlan(NamedTuple):
    """The victims an ``alloc`` must evict by the policy's rule, computed before it runs.

    ``expect`` is policy-private: what ``plan_holds`` checks of the policy's
    state afterwards (e.g. the new head, the new clock).
    """

    victims: tuple[str, ...]
    victim_blocks: int
    expect: object


class EvictionPolicy(ABC):
    """One eviction policy: an ordering over the evictable entries and a victim rule."""

    #: The name ``EmbeddingCache(..., eviction=NAME)`` takes.
    name: ClassVar[str]
    #: The one name (spec/NAMES.md) of the policy's order property.
    order_property: ClassVar[str]
    #: The policy's verification adapter (its module sets it below the class).
    checks_class: ClassVar[type[PolicyChecks[Any]]]

    __slots__ = ()

    def __init__(self, num_blocks: int = 0) -> None:  # noqa: B027 - nothing to set up here
        """A policy for a pool of ``num_blocks`` blocks, holding nothing evictable."""

    # ------------------------------------------------------------ events

    def admit(self, key: str, size: int) -> None:  # noqa: B027 - an optional hook
        """``alloc`` created the not-ready entry ``key``. Default: ignored. O(1)."""

    def forget(self, key: str) -> None:  # noqa: B027 - an optional hook
        """``discard`` removed the not-ready entry ``key``. Default: ignored. O(1)."""

    @abstractmethod
    def ready(self, key: str, size: int) -> None:
        """``mark_ready``: ``key`` (``size`` blocks) joins the evictable set."""

    def hit(self, key: str) -> None:  # noqa: B027 - an optional hook
        """A use of the ready entry ``key``. Default: ignored. O(1)."""

    @abstractmethod
    def hold(self, key: str) -> None:
        """The first pin: ``key`` leaves the evictable set."""

    @abstractmethod
    def release(self, key: str, size: int) -> None:
        """The last unpin: ``key`` (``size`` blocks) rejoins the evictable set."""

    @abstractmethod
    def evict(self) -> str:
        """Remove the next victim from the evictable set and return its key."""

    @abstractmethod
    def __len__(self) -> int:
        """How many entries are evictable. O(1)."""

    @abstractmethod
    def __contains__(self, key: object) -> bool:
        """True when ``key`` is evictable. O(1)."""

    @abstractmethod
    def evictable_keys(self) -> Iterable[str]:
        """The evictable keys, each once, in no promised order. O(E)."""

    def hooks(self) -> Hooks:
        """The bound hooks the transitions call (fifo overrides it with C-level ones)."""
        cls = type(self)
        return Hooks(
            ready=self.ready,
            release=self.release,
            hold=self.hold,
            hit=None if cls.hit is EvictionPolicy.hit else self.hit,
            admit=None if cls.admit is EvictionPolicy.admit else self.admit,
            forget=None if cls.forget is EvictionPolicy.forget else self.forget,
            evict=self._evict_pair,
            evictable_count=self.__len__,
        )

    def _evict_pair(self) -> tuple[str, object]:
        return self.evict(), None

    def checks(self) -> PolicyChecks[Any]:
        """This policy's verification adapter (``checks_class``), bound to it. O(1)."""
        return self.checks_class(self)


P = TypeVar("P", bound=EvictionPolicy)


#: The value a ``MembersPolicy`` keeps for each evictable key (its ordering data).
V = TypeVar("V")


class MembersPolicy(EvictionPolicy, Generic[V]):
    """A policy whose evictable set is the keys of one dict, ``members`` (each key's
    ordering data as its value; its subclass's ``ready`` and ``release`` fill it and
    ``evict`` empties it). Membership, the count and ``hold`` are that dict's, in
    one place for every such policy (gdsf, density)."""

    __slots__ = ("members",)

    def __init__(self, num_blocks: int = 0) -> None:
        """No key evictable yet. O(1)."""
        super().__init__(num_blocks)
        #: Evictable key -> its ordering data.
        self.members: dict[str, V] = {}

    def hold(self, key: str) -> None:
        """Leave the evictable set; any index of the subclass goes stale. O(1)."""
        del self.members[key]

    def hooks(self) -> Hooks:
        """As the base's, but ``hold`` is the members dict's own C-level ``__delitem__``
        (a pin is frequent), unless a subclass overrides ``hold``."""
        hooks = super().hooks()
        if type(self).hold is MembersPolicy.hold:
            hooks = hooks._replace(hold=self.members.__delitem__)
        return hooks

    def __len__(self) -> int:
        """How many entries are evictable. O(1)."""
        return len(self.members)

    def __contains__(self, key: object) -> bool:
        """True when ``key`` is evictable. O(1)."""
        return key in self.members

    def evictable_keys(self) -> Iterable[str]:
        """The evictable keys, in the dict's order. O(1) for the view."""
        return self.members.keys()


def take_in_order(
    keys: Iterator[str], free: int, n: int, size_of: SizeOf, more: MoreVictims | None
) -> tuple[list[str], int]:
    """The victims a plan takes from ``keys`` (the evictable keys in the rule's order),
    and their blocks: keys while ``free`` + their blocks < ``n``, then while ``more``
    asks for one more (contiguity's extras, SPEC.md section 14), until ``keys`` runs
    out. ``keys`` is left just past the last victim, so the caller may read the next
    key (a survivor). O(victims) plus what ``keys`` costs."""
    victims: list[str] = []
    freed = 0
    while free + freed < n or (more is not None and more(victims)):
        key = next(keys, None)
        if key is None:  # no victim left: contiguity's extras, or EvictableCountInv broken
            break
        victims.append(key)
        freed += size_of(key)
    return victims, freed


class PolicyChecks(ABC, Generic[P]):
    """The verification side of one policy: what the checks read of it, never a hook.

    Bound to one policy object (``policy``); it reads the policy's structure
    and changes nothing (but ``clone``, which makes a new policy).
    """

    __slots__ = ("policy",)

    def __init__(self, policy: P) -> None:
        #: The policy this adapter reads.
        self.policy = policy

    @abstractmethod
    def plan_victims(
        self, free: int, n: int, size_of: SizeOf, more: MoreVictims | None = None
    ) -> VictimPlan:
        """The victims of an alloc of ``n`` blocks with ``free`` free, by the policy's rule.

        Written from the rule's text (spec/POLICIES.md), not from ``evict``, and
        without changing anything: the checked build compares it with what
        ``evict`` did. The caller has checked free + evictable >= n. The plan
        takes victims in the rule's order while free + their blocks < n, and
        then while ``more(victims so far)`` says so (None: never) and a victim
        is left: the contiguity loop (spec/SPEC.md section 14). ``more`` may
        be asked more than once with the same victims.
        O(victims + entries the rule passes over), never O(E).
        """

    @abstractmethod
    def plan_holds(self, plan: VictimPlan) -> bool:
        """After the alloc: the policy's state agrees with ``plan.expect``. O(1)."""

    @abstractmethod
    def joined_ok(self, key: str, before: int) -> str | None:
        """After ``ready``/``release`` of ``key`` (``before`` evictable keys until then):
        None if ``key`` joined where the rule puts it, else what is wrong. O(1)."""

    def used_ok(self, key: str, before: P) -> str | None:
        """After a pin of ready ``key`` (a use: ``hit``, and ``hold`` on the first pin),
        ``before`` being a copy of the policy from before it: None if the use changed the
        policy only as the rule says, else what is wrong. The base makes no statement
        (None); a policy whose rule says where a use leaves a key states it here, since
        neither ``plan_victims`` (which follows the structure as the use left it) nor
        ``check`` (one state) can see a use that moves a key. Read by the replay's order
        property (``embedding_cache_checker.verify.transition_properties``), not by a contract
        (it needs the copy). O(1)."""
        return None

    @abstractmethod
    def abstract(self) -> dict[str, Any]:
        """The policy's state as its TLA+ module's variables (tla/README.md). O(E log E)."""

    @abstractmethod
    def check(self, ready_sizes: Mapping[str, int], evictable: Mapping[str, int]) -> str | None:
        """The policy's own invariants, EvictableSetInv first. O(E + ready entries).

        ``ready_sizes``: every ready live key (pinned or not) -> its block
        count; ``evictable``: the ready+unpinned ones. None when all hold,
        else a sentence naming the invariant and what is wrong.
        """

    @abstractmethod
    def clone(self) -> P:
        """An independent copy (replay branches states). O(E)."""
