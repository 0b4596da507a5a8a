"""density's reference model: use counts, a history list, a join-order list, a tick counter.

From spec/policies/density.md: admit sets count[k] to k's remembered count (0 if
none) + 1, capped at max_count, and drops k from the history; a hit adds 1
(capped); both tick, and the period-th tick halves every count (a live one
stays >= 1, a remembered one at 0 is forgotten). ready and release append k to
``order``; hold removes it. The victim is the member of ``order`` with the
smallest scale * count // max(size, 1), ties to the earliest, found by a plain
list scan; its count (and a forgotten key's) is appended to the history, whose
oldest entry goes when it holds more than history_size keys.
"""

from __future__ import annotations

from typing import Any

from .base import PolicyModel


class DensityModel(PolicyModel):
    """Lowest use density first. evict O(E) (a list scan), hold O(E), aging O(K + H)."""

    name = "density"

    def __init__(
        self,
        num_blocks: int,
        scale: int = 2**32,
        max_count: int = 2**16,
        history_size: int | None = None,
        period: int | None = None,
    ) -> None:
        super().__init__()
        self.scale = scale
        self.max_count = max_count
        # The defaults the page gives: max(8, N // 16) keys, max(16, N // 4) ticks.
        self.history_size = max(8, num_blocks // 16) if history_size is None else history_size
        self.period = max(16, num_blocks // 4) if period is None else period
        self.count: dict[str, int] = {}  # live keys -> 1 .. max_count
        self.history: list[list[Any]] = []  # [key, count] of non-live keys, oldest first
        self.order: list[str] = []  # E in the order its members joined
        self.size: dict[str, int] = {}  # E -> its blocks
        self.ticks = 0

    def _remembered(self, key: str) -> int:
        for k, c in self.history:
            if k == key:
                return int(c)
        return 0

    def _remember(self, key: str, count: int) -> None:
        self.history.append([key, count])
        if len(self.history) > self.history_size:
            self.events.append("density: the history forgets its oldest key")
            self.history.pop(0)

    def _tick(self) -> None:
        self.ticks += 1
        if self.ticks == self.period:
            self.events.append("density: the counts halve")
            self.ticks = 0
            for key in self.count:
                self.count[key] = max(1, self.count[key] // 2)
            self.history = [[k, c // 2] for k, c in self.history if c // 2 > 0]

    def admit(self, key: str, size: int) -> None:
        was = self._remembered(key)
        if was:
            self.events.append("density: a key comes back with its count")
        self.history = [[k, c] for k, c in self.history if k != key]
        self.count[key] = min(self.max_count, was + 1)
        self._tick()

    def forget(self, key: str) -> None:
        self._remember(key, self.count.pop(key))

    def ready(self, key: str, size: int) -> None:
        self.order.append(key)
        self.size[key] = size

    def release(self, key: str, size: int) -> None:
        self.order.append(key)
        self.size[key] = size

    def hit(self, key: str) -> None:
        if self.count[key] >= self.max_count:
            self.events.append("density: a use count is at its cap")
        self.count[key] = min(self.count[key] + 1, self.max_count)
        self._tick()

    def hold(self, key: str) -> None:
        self.order.remove(key)
        del self.size[key]

    def _density(self, key: str) -> int:
        return (self.scale * self.count[key]) // max(self.size[key], 1)

    def evict(self) -> str:
        victim = self.order[0]
        for key in self.order:  # strictly lower only: on a tie the earlier one stays
            if self._density(key) < self._density(victim):
                victim = key
        if sum(1 for k in self.order if self._density(k) == self._density(victim)) > 1:
            self.events.append("density: a tie on the lowest density")
        self.order.remove(victim)
        del self.size[victim]
        self._remember(victim, self.count.pop(victim))
        return victim

    def variables(self) -> dict[str, Any]:
        return {
            "count": dict(self.count),
            "history": tuple((k, c) for k, c in self.history),
            "order": tuple(self.order),
            "ticks": self.ticks,
        }


#: This policy's reference model (``reference_models.REFERENCE_MODELS`` finds it by name).
MODEL = DensityModel
