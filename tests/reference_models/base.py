"""The hooks a policy model answers: the events of spec/POLICIES.md."""

from __future__ import annotations

from typing import Any


class PolicyModel:
    """A policy's ordering rule as a model; the defaults ignore an event.

    Events: ``admit`` (alloc created the not-ready k), ``forget`` (discard
    removed it), ``ready`` (mark_ready: k joins E), ``hit`` (a use: PinStep on
    a ready entry), ``hold`` (first pin: k leaves E; before ``hit``),
    ``release`` (last unpin: k rejoins E), ``evict`` (remove and return the
    next victim; E is not empty).
    """

    #: The policy name the model is for (``EmbeddingCache(..., eviction=NAME)``).
    name = ""

    def __init__(self) -> None:
        #: Notable moments (a tie, a cap, a promotion), for Hypothesis' statistics.
        self.events: list[str] = []

    def admit(self, key: str, size: int) -> None:
        """alloc created the not-ready entry ``key``."""

    def forget(self, key: str) -> None:
        """discard removed the not-ready entry ``key``."""

    def ready(self, key: str, size: int) -> None:
        """mark_ready: ``key`` joins E."""
        raise NotImplementedError

    def hit(self, key: str) -> None:
        """A use of the ready entry ``key``."""

    def hold(self, key: str) -> None:
        """The first pin: ``key`` leaves E."""
        raise NotImplementedError

    def release(self, key: str, size: int) -> None:
        """The last unpin: ``key`` rejoins E."""
        raise NotImplementedError

    def evict(self) -> str:
        """Remove and return the next victim."""
        raise NotImplementedError

    def variables(self) -> dict[str, Any]:
        """The policy's variables, named and shaped as ``PolicyChecks.abstract`` gives them."""
        raise NotImplementedError
