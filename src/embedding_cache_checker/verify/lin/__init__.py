"""Linearizability: concurrent histories of the cache checked against its sequential specification.

* ``history``  -- record a history: threads call one cache, every call's
                  interval and outcome is kept;
* ``spec``     -- the sequential specification: the transitions, one at a time;
* ``checker``  -- Wing & Gong's search with Lowe's memoisation;
* ``mutants``  -- caches that are not linearizable (split and unlocked methods);
* ``report``   -- ``linearizability_report``: figures per policy, mutants caught.
"""

from __future__ import annotations

from .checker import LinResult, check_calls
from .history import Call, EntryView, History, Invocation, Raised, random_plan, record_history
from .mutants import MUTANTS
from .report import format_report, hunt, linearizability_report, run_one

__all__ = [
    "MUTANTS",
    "Call",
    "EntryView",
    "History",
    "Invocation",
    "LinResult",
    "Raised",
    "check_calls",
    "format_report",
    "hunt",
    "linearizability_report",
    "random_plan",
    "record_history",
    "run_one",
]
