"""s3fifo's reference model: plain Python lists for S, M and G, the loop written out.
The stateful test holds the cache to it step by step, so it checks the rule that
EvictProbationFirstProp states in TLA+ (spec/POLICIES.md, "s3fifo").

From the draft: small_target = max(1, N div 10) blocks; ghost capacity
N - small_target blocks, a key weighing max(size, 1); counters capped at 3.
admit: a key found in G leaves G and is homed in M, any other in S. ready:
counter 0, append to the home queue. hit: counter + 1 up to 3. hold: leave
the home queue (home kept). release: append to the home queue. evict loops:

* S non-empty and (blocks(S) >= small_target or M empty): S's head; used ->
  moved to M's tail, homed in M, counter 0, loop; unused -> evicted and
  appended to G (G's oldest trimmed while over capacity);
* otherwise M's head; used -> counter - 1, moved to M's tail, loop; unused ->
  evicted.
"""

from __future__ import annotations

from typing import Any

from .base import PolicyModel

FREQ_CAP = 3


class S3FifoModel(PolicyModel):
    """S3-FIFO over lists. Every event O(E) at worst (list.remove, sums); the pools are tiny."""

    name = "s3fifo"

    def __init__(self, num_blocks: int) -> None:
        super().__init__()
        self.small_target = max(1, num_blocks // 10)
        self.ghost_capacity = num_blocks - self.small_target
        self.small: list[str] = []  # E homed in S, oldest first
        self.main: list[str] = []  # E homed in M, oldest first
        self.ghost: list[tuple[str, int]] = []  # (evicted key, weight), oldest first
        self.freq: dict[str, int] = {}  # ready live keys -> 0..3
        self.home: dict[str, str] = {}  # live keys -> "S" or "M"
        self.size: dict[str, int] = {}  # live keys -> blocks (the model's own bookkeeping)

    def admit(self, key: str, size: int) -> None:
        self.size[key] = size
        ghost_keys = [k for k, _ in self.ghost]
        if key in ghost_keys:
            del self.ghost[ghost_keys.index(key)]
            self.home[key] = "M"
            self.events.append("s3fifo: a key came back from the ghost")
        else:
            self.home[key] = "S"

    def forget(self, key: str) -> None:
        del self.home[key]
        del self.size[key]

    def _queue(self, key: str) -> list[str]:
        return self.small if self.home[key] == "S" else self.main

    def ready(self, key: str, size: int) -> None:
        self.freq[key] = 0
        self._queue(key).append(key)

    def hit(self, key: str) -> None:
        if self.freq[key] == FREQ_CAP:
            self.events.append("s3fifo: a counter is at its cap")
        self.freq[key] = min(self.freq[key] + 1, FREQ_CAP)

    def hold(self, key: str) -> None:
        self._queue(key).remove(key)

    def release(self, key: str, size: int) -> None:
        self._queue(key).append(key)

    def evict(self) -> str:
        while True:
            small_blocks = sum(self.size[k] for k in self.small)
            if self.small and (small_blocks >= self.small_target or not self.main):
                key = self.small.pop(0)
                if self.freq[key] >= 1:
                    self.main.append(key)
                    self.home[key] = "M"
                    self.freq[key] = 0
                    self.events.append("s3fifo: promoted from S to M")
                    continue
                self.ghost.append((key, max(self.size[key], 1)))
                while sum(w for _, w in self.ghost) > self.ghost_capacity:
                    self.ghost.pop(0)
                self.events.append("s3fifo: evicted from S")
                break
            key = self.main.pop(0)
            if self.freq[key] >= 1:
                self.freq[key] -= 1
                self.main.append(key)
                self.events.append("s3fifo: a second chance in M")
                continue
            self.events.append("s3fifo: evicted from M")
            break
        del self.freq[key]
        del self.home[key]
        del self.size[key]
        return key

    def variables(self) -> dict[str, Any]:
        return {
            "small": tuple(self.small),
            "main": tuple(self.main),
            "ghost": tuple(self.ghost),
            "freq": dict(self.freq),
            "home": dict(self.home),
        }


#: This policy's reference model (``reference_models.REFERENCE_MODELS`` finds it by name).
MODEL = S3FifoModel
