"""gdsf's reference model: a dict of priorities, a join-order list, a clock, use counts.

From the draft: freq[k] is 1 at ready and min(freq + 1, F) per use; on joining
E (ready or release) prio[k] = clock + (S * freq[k]) div max(size, 1) and k is
appended to ``order``; the victim is the member of E with the smallest prio,
ties broken by the earliest position in ``order``, found by a plain list
scan; evicting raises the clock to the victim's prio. hold removes k from
prio and order (its freq stays); evict drops freq (forget has nothing to drop:
use counts exist only for ready keys).
"""

from __future__ import annotations

from typing import Any

from .base import PolicyModel

#: The implementation's defaults (spec/POLICIES.md: scale 2**32, max_freq 2**16).
DEFAULT_SCALE = 2**32
DEFAULT_MAX_FREQ = 2**16


class GdsfModel(PolicyModel):
    """GreedyDual-Size-Frequency in integers. evict O(E) (a list scan), hold O(E), the rest O(1)."""

    name = "gdsf"

    def __init__(
        self, num_blocks: int, scale: int = DEFAULT_SCALE, max_freq: int = DEFAULT_MAX_FREQ
    ) -> None:
        super().__init__()
        self.scale = scale
        self.max_freq = max_freq
        self.clock = 0
        self.prio: dict[str, int] = {}  # E -> priority, fixed when it joined
        self.freq: dict[str, int] = {}  # ready live keys -> 1 .. max_freq
        self.order: list[str] = []  # E in the order its members joined

    def _join(self, key: str, size: int) -> None:
        self.prio[key] = self.clock + (self.scale * self.freq[key]) // max(size, 1)
        self.order.append(key)

    def ready(self, key: str, size: int) -> None:
        self.freq[key] = 1
        self._join(key, size)

    def release(self, key: str, size: int) -> None:
        self._join(key, size)

    def hit(self, key: str) -> None:
        if self.freq[key] >= self.max_freq:
            self.events.append("gdsf: a use count is at its cap")
        self.freq[key] = min(self.freq[key] + 1, self.max_freq)

    def hold(self, key: str) -> None:
        del self.prio[key]
        self.order.remove(key)

    def evict(self) -> str:
        victim = self.order[0]
        for key in self.order:  # strictly lower only: on a tie the earlier one stays the victim
            if self.prio[key] < self.prio[victim]:
                victim = key
        if sum(1 for k in self.order if self.prio[k] == self.prio[victim]) > 1:
            self.events.append("gdsf: a tie on the lowest priority")
        if self.prio[victim] > self.clock:
            self.events.append("gdsf: the clock rises")
        self.clock = self.prio[victim]
        del self.prio[victim]
        self.order.remove(victim)
        del self.freq[victim]
        return victim

    def variables(self) -> dict[str, Any]:
        return {
            "prio": dict(self.prio),
            "freq": dict(self.freq),
            "order": tuple(self.order),
            "clock": self.clock,
        }


#: This policy's reference model (``reference_models.REFERENCE_MODELS`` finds it by name).
MODEL = GdsfModel
