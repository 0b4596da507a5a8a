"""Planted bugs in the plugin's scheduler, each breaking one obligation of the safe order.

The engine-trace check (``verify.engine_traces``) is shown on them to catch a bug in a
scheduler, not only vLLM's order: each is ``VerifiedECCPUScheduler`` (as the harness
builds it, traced or not) with one override changed, and the harness runs it as
``CacheChoice("plugin", planted=NAME)``. spec/PROTOCOLS.md section 4 states the
obligations.

- ``save-for-hit``: a checked hit's update dispatches its load and a save of it too, a
  save of an output the engine never computed (the worker never makes it; the
  obligation SaveOfComputedProp states).
- ``early-release``: a load's lease is released when the step's meta is built, before
  the worker reports the load, so its blocks may be evicted under the copy (the
  obligation that the consumer releases a load's pin once every rank has reported).

The classes are in ``planted_schedulers`` (which imports vLLM); this module names them
without importing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .plugin import TracedPluginScheduler

#: The planted bugs by name, each with the obligation it breaks.
PLANTED = {
    "save-for-hit": "a checked hit's update dispatches a save of it too",
    "early-release": "a load's lease is released when the meta is built, before its report",
}


def planted_scheduler(name: str) -> type[TracedPluginScheduler]:
    """The class of the planted scheduler called ``name`` (imports vLLM).

    Raises:
        ValueError: no planted scheduler has that name.
    """
    if name not in PLANTED:
        raise ValueError(f"no planted scheduler {name!r}; there are {', '.join(PLANTED)}")
    from .planted_schedulers import CLASSES

    return CLASSES[name]
