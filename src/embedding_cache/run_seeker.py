"""RunSeeker: the victim planner of contiguity (spec/SPEC.md section 14), for the alloc contract.

``snapshots.plan_alloc`` hands it to the policy's ``plan_victims`` as the
``MoreVictims`` question: once the needed victims would free enough blocks,
is one more victim due? It answers on a scratch copy of the free pool, so
the plan is computed independently of the code that evicts (the contiguity
loop, ``transitions.evict_for_run``). Costs are on the class.
"""

from __future__ import annotations

from collections.abc import Sequence

from .extent_pool import ExtentPool
from .state import CacheState


class RunSeeker:
    """Contiguity's rule as ``plan_victims`` asks it (``MoreVictims``), on a scratch pool.

    Once enough blocks would be free, one more victim is planned while fewer
    than ``s.contiguity`` extra ones are and no free run holds n, the planned
    victims' blocks given back to a copy of the free pool (spec/SPEC.md
    section 14; TLA+ KeepEvicting). Idempotent for the same victims, as
    ``plan_victims`` may ask again after passing entries over.
    O(extents) to copy the pool, then O(has_run + blocks) per victim.
    """

    __slots__ = ("_entries", "_given", "_k", "_n", "_scratch", "needed")

    def __init__(self, s: CacheState, n: int) -> None:
        free = s.free
        # The extents without their membership map (a tracked pool's): only runs are asked.
        self._scratch = ExtentPool.copy(free) if isinstance(free, ExtentPool) else free.copy()
        self._entries = s.entries
        self._given = 0
        self._k = s.contiguity
        self._n = n
        #: How many victims were needed: the plan's length when first asked.
        self.needed: int | None = None

    def __call__(self, victims: Sequence[str]) -> bool:
        if self.needed is None:
            self.needed = len(victims)
        for key in victims[self._given :]:
            self._scratch.give(self._entries[key].block_ids)
        self._given = len(victims)
        return len(victims) - self.needed < self._k and not self._scratch.has_run(self._n)


__all__ = ["RunSeeker"]
