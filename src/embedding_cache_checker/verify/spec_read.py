"""A TLA+ state of a dumped graph read as ``abstraction`` reads the code's: the spec's side
of the state-graph replay's comparisons (``replay``, ``lease_replay``) and of trace
validation's tests.

``spec_abstract`` gives the ``AbstractState`` (entries' pins and sizes, the policy's
variables as its ``abstract()`` names them, free blocks, held, and the admission
model's ``door``); ``spec_blocks`` the ``BlockState`` of a block-level state (the
block-exact replay's); ``last_op`` the call a state records (``lastOp``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..abstraction import AbstractEntry, AbstractState, BlockState, policy_view
from .tla_values import ModelValue, TlaFunction, TlaValue


def spec_value(value: TlaValue) -> Any:
    """A TLA+ value as the code's ``PolicyChecks.abstract()`` writes it (before ``policy_view``).

    Functions and records become dicts, sequences tuples, model values str;
    the empty function ``<<>>`` stays an empty tuple, which ``policy_view``
    makes equal to an empty dict. O(size of the value).
    """
    if isinstance(value, TlaFunction):
        return {spec_value(k): spec_value(v) for k, v in value.items()}  # type: ignore[arg-type]
    if isinstance(value, tuple):
        return tuple(spec_value(v) for v in value)
    if isinstance(value, frozenset):
        return frozenset(spec_value(v) for v in value)
    if isinstance(value, ModelValue):
        return str(value)
    return value


def _free_count(free: TlaValue) -> int:
    """The number of free blocks: a set of ids (block level) or a number (counts level)."""
    if isinstance(free, frozenset):
        return len(free)
    assert isinstance(free, int), free
    return free


def spec_abstract(
    state: Mapping[str, TlaValue], policy_vars: tuple[str, ...] = ("queue",)
) -> AbstractState:
    """The spec's state read the same way as ``abstraction.abstract_state`` reads the code's.

    ``policy_vars`` are the policy variables compared (``policy_variables``),
    read as fields of the record variable ``policy`` or as variables of their
    own, each as ``spec_value`` reads it: a policy's ``abstract()`` writes its
    variables in the shapes its TLA+ module gives them (tla/README.md), so no
    policy needs a reader of its own. O(size of the state).

    Raises:
        KeyError: the spec's state lacks one of ``policy_vars``.
    """
    entries = state["entries"]
    live = entries if isinstance(entries, TlaFunction) else {}
    pairs = []
    for key, record in live.items():
        assert isinstance(record, TlaFunction)
        pins = record["pins"]
        blocks = record["blocks"] if "blocks" in record else record["size"]
        assert isinstance(pins, int) and isinstance(blocks, (frozenset, int))
        size = len(blocks) if isinstance(blocks, frozenset) else blocks
        pairs.append((str(key), AbstractEntry(pins, size)))
    # The policy's variables: fields of the record variable ``policy``, or variables of
    # their own (the TLA+ modules have used both shapes).
    whole = state.get("policy")
    fields: Mapping[object, TlaValue] = whole if isinstance(whole, TlaFunction) else {}
    variables = {}
    for name in policy_vars:
        if name in state:
            raw = state[name]
        elif name in fields:
            raw = fields[name]
        else:
            raise KeyError(f"the spec's state has no policy variable {name!r}: {sorted(state)}")
        variables[name] = spec_value(raw)
    return AbstractState(
        entries=tuple(sorted(pairs)),
        policy=policy_view(variables),
        free=_free_count(state["free"]),
        # The spec's meaning of has_held_entries(), not the code's shortcut.
        held=any(e.pins != 0 for _, e in pairs),
        door=_door(state),
    )


def _door(state: Mapping[str, TlaValue]) -> tuple[str, ...]:
    """The admission model's ``door`` (keys, oldest first); empty when the model has none
    (as the code's without a filter). O(len(door))."""
    door = state.get("door", ())
    assert isinstance(door, tuple), door
    return tuple(str(k) for k in door)


def spec_blocks(state: Mapping[str, TlaValue]) -> BlockState:
    """The block ids of a block-level spec state, read as ``abstraction.block_state`` reads
    the code's. O(size of the state)."""
    entries = state["entries"]
    live = entries if isinstance(entries, TlaFunction) else {}
    pairs = []
    for key, record in live.items():
        assert isinstance(record, TlaFunction)
        blocks = record["blocks"]
        assert isinstance(blocks, frozenset), "block-exact replay needs a block-level model"
        pairs.append((str(key), frozenset(b for b in blocks if isinstance(b, int))))
    free = state["free"]
    assert isinstance(free, frozenset), "block-exact replay needs a block-level model"
    return BlockState(tuple(sorted(pairs)), frozenset(b for b in free if isinstance(b, int)))


def last_op(state: Mapping[str, TlaValue]) -> tuple[str, str, int]:
    """(action, key, n) of the operation a spec state records (the history variable
    ``lastOp``), e.g. ``("Alloc", "k1", 2)``. O(1)."""
    last = state["lastOp"]
    assert isinstance(last, TlaFunction)
    op, key, n = last["op"], last["key"], last["n"]
    assert isinstance(op, str) and isinstance(n, int)
    return op, str(key), n
