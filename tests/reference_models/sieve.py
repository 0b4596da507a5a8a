"""sieve's reference model: a plain list for the queue and an index for the hand.

From the draft (spec/POLICIES.md, "sieve"): the ready keys in a list, oldest
first; a visited flag and a pinned (held) flag per queued key; the hand an index into
the list, or None (start at the oldest). ready: append, unvisited, unheld.
hit: visited. hold: held (the key stays where it is). release: unheld.
evict: from the hand (or index 0), toward the end, wrapping to index 0: skip a
held key; clear a visited key's flag and go on; remove the first unvisited
unheld key, and leave the hand at the index it had (now its newer
neighbour), or None when it was the last.
"""

from __future__ import annotations

from typing import Any

from .base import PolicyModel


class SieveModel(PolicyModel):
    """SIEVE over a list. evict O(queued) per step of the hand; the pools are tiny."""

    name = "sieve"

    def __init__(self, num_blocks: int) -> None:
        super().__init__()
        self.queue: list[str] = []  # the ready keys, oldest first
        self.visited: dict[str, bool] = {}  # queued keys -> used since the hand passed
        self.pinned: dict[str, bool] = {}  # queued keys -> pinned
        self.hand: int | None = None  # index into queue where the next eviction starts

    def ready(self, key: str, size: int) -> None:
        self.queue.append(key)
        self.visited[key] = False
        self.pinned[key] = False

    def hit(self, key: str) -> None:
        self.visited[key] = True

    def hold(self, key: str) -> None:
        self.pinned[key] = True

    def release(self, key: str, size: int) -> None:
        self.pinned[key] = False

    def evict(self) -> str:
        i = 0 if self.hand is None else self.hand
        if self.hand is not None and self.hand != 0:
            self.events.append("sieve: an eviction starts past the oldest key")
        while True:
            key = self.queue[i]
            if self.pinned[key]:
                self.events.append("sieve: the hand passed a held key")
            elif self.visited[key]:
                self.visited[key] = False
                self.events.append("sieve: the hand cleared a visited key")
            else:
                break
            i = i + 1 if i + 1 < len(self.queue) else 0
            if i == 0:
                self.events.append("sieve: the hand wrapped around")
        del self.queue[i]
        del self.visited[key]
        del self.pinned[key]
        self.hand = i if i < len(self.queue) else None
        return key

    def variables(self) -> dict[str, Any]:
        return {
            "queue": tuple(self.queue),
            "visited": dict(self.visited),
            "pinned": dict(self.pinned),
            "hand": 0 if self.hand is None else self.hand + 1,
        }


#: This policy's reference model (``reference_models.REFERENCE_MODELS`` finds it by name).
MODEL = SieveModel
