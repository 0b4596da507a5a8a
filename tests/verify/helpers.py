"""Helpers shared by the conformance-link tests."""

from __future__ import annotations

from embedding_cache_checker.verify.tla_values import TlaFunction, TlaValue


def plain(value: TlaValue) -> object:
    """``value`` with every TlaFunction (record or function) turned into a dict, recursively.

    Lets a test compare a parsed value with a Python literal (a TlaFunction
    already equals a dict; this only spells the comparison in types mypy accepts).
    """
    if isinstance(value, TlaFunction):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, frozenset):
        return frozenset(plain(v) for v in value)
    return value
