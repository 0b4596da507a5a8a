"""fifo's reference model: a ghost logical clock and a stamp per evictable key.

The draft states EvictOldestFirstProp on a ghost clock: stamp[k] is the clock
value when k last joined E, and the victim is the member of E with the
smallest stamp. The model keeps exactly that and nothing else; its ``queue``
variable is E sorted by stamp, oldest first.
"""

from __future__ import annotations

from typing import Any

from .base import PolicyModel


class FifoModel(PolicyModel):
    """Victim: the evictable key that joined E longest ago. evict is O(E), the rest O(1)."""

    name = "fifo"

    def __init__(self, num_blocks: int) -> None:
        super().__init__()
        self.clock = 0
        self.stamp: dict[str, int] = {}  # E -> the clock value when it (last) joined

    def _join(self, key: str) -> None:
        self.clock += 1
        self.stamp[key] = self.clock

    def ready(self, key: str, size: int) -> None:
        self._join(key)

    def release(self, key: str, size: int) -> None:
        self._join(key)

    def hold(self, key: str) -> None:
        del self.stamp[key]

    def evict(self) -> str:
        victim = min(self.stamp, key=lambda k: self.stamp[k])  # stamps are unique
        del self.stamp[victim]
        return victim

    def variables(self) -> dict[str, Any]:
        return {"queue": tuple(sorted(self.stamp, key=lambda k: self.stamp[k]))}


#: This policy's reference model (``reference_models.REFERENCE_MODELS`` finds it by name).
MODEL = FifoModel
