"""The code policy a model stands for, built from the model's manifest entry
(tla/models.json) and checked against its config.

The policy is a name of ``EVICTION_POLICIES`` with the constructor parameters the
model's ``policy_params`` set (TLA+ constants, each the code policy's attribute of
its snake_case name: ``code_name``); the model's alloc rule is ``alloc_rule``'s. The
state-graph replay (``replay``, ``lease_replay``), trace validation and the
counterexample replay build the code's policy from here.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping

from embedding_cache.policies import EVICTION_POLICIES, EvictionPolicy, make_policy

#: What builds the code's policy: a name in ``EVICTION_POLICIES`` or a factory of ``num_blocks``.
PolicyFactory = str | Callable[[int], EvictionPolicy]


#: A TLA+ constant's word boundaries (MaxFreq: Max|Freq).
_WORD = re.compile(r"(?<!^)(?=[A-Z])")


def code_name(constant: str) -> str:
    """The code policy's attribute (and constructor parameter, if it is one) of the same
    meaning as the TLA+ constant ``constant``: its name in snake_case (``Scale`` ->
    ``scale``, ``SmallTarget`` -> ``small_target``); a snake_case name is its own. One rule
    for every policy (tla/README.md), so no policy is listed here. O(len(constant))."""
    return _WORD.sub("_", constant).lower()


def policy_factory(name: str, params: Mapping[str, int] | None = None) -> PolicyFactory:
    """The factory of policy ``name`` with constructor parameters ``params`` (e.g. gdsf's
    ``scale``), or with the TLA+ constants a model sets (``policy_params`` in
    tla/models.json, e.g. ``Scale``): those that are constructor parameters are passed,
    the derived ones (s3fifo's ``SmallTarget``) must agree with the code's
    (``check_constants``).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    kwargs = code_params(name, params or {})
    return functools.partial(EVICTION_POLICIES[name], **kwargs) if kwargs else name


def code_params(name: str, params: Mapping[str, int]) -> dict[str, int]:
    """The constructor parameters of policy ``name`` among ``params`` (given by the code's
    names, or by the TLA+ constants' names, ``code_name``); the others are dropped.
    O(len(params)).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    cls = EVICTION_POLICIES.get(name)
    if cls is None:
        raise ValueError(f"unknown eviction policy {name!r}; known: {sorted(EVICTION_POLICIES)}")
    accepted = inspect.signature(cls).parameters
    kwargs = {code_name(k): v for k, v in params.items()}
    return {k: v for k, v in kwargs.items() if k in accepted}


def _constant_value(policy: EvictionPolicy, constant: str) -> int | None:
    """The code policy's value of TLA+ constant ``constant`` (None: it has no such integer
    attribute, so the constant is not one of its module's). O(1)."""
    value = getattr(policy, code_name(constant), None)
    return value if type(value) is int else None


def code_constants(policy: EvictionPolicy, names: Iterable[str]) -> dict[str, int]:
    """The TLA+ constants ``names`` of ``policy``'s module (its plan's ``tla_constants``,
    from the manifest), valued as the code's policy has them. O(len(names)).

    Raises:
        ValueError: the code's policy has no integer attribute for one of them.
    """
    values = {name: _constant_value(policy, name) for name in names}
    missing = [name for name, value in values.items() if value is None]
    if missing:
        attrs = [code_name(name) for name in missing]
        raise ValueError(f"the code's {policy.name} has no integer attribute {attrs} for {missing}")
    return {name: value for name, value in values.items() if value is not None}


def check_constants(policy: EvictionPolicy, constants: Mapping[str, object]) -> str | None:
    """None when every constant of ``constants`` (a model's config or ``policy_params``)
    that is one of ``policy``'s (an integer attribute by its ``code_name``) has the code
    policy's value; else what differs. O(len(constants))."""
    for name, given in constants.items():
        value = _constant_value(policy, name)
        if value is not None and str(given).strip() != str(value):
            return f"{name} is {given} in the model but {value} in the code's {policy.name}"
    return None


def derived_constants(
    name: str, constants: Mapping[str, object], num_blocks: int
) -> dict[str, int]:
    """The derived TLA+ constants among ``constants`` (a model's config, e.g. s3fifo's
    ``SmallTarget``), valued as the code's policy ``name`` has them for a pool of
    ``num_blocks`` blocks: the constants that are integer attributes of that policy
    (``code_name``) but not constructor parameters, the policy built with the
    constructor parameters the config sets (gdsf's ``Scale``, kept as given). What a
    config scaled to another pool size rewrites (``tlc.shapes.scale_config``); one rule
    for every policy, so none is listed. O(len(constants)).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    given = {k: int(str(v)) for k, v in constants.items() if re.fullmatch(r"-?\d+", str(v))}
    params = code_params(name, given)
    policy = make_policy(policy_factory(name, params), num_blocks)
    values = {c: _constant_value(policy, c) for c in constants if code_name(c) not in params}
    return {c: value for c, value in values.items() if value is not None}


def policy_variables(policy: PolicyFactory, num_blocks: int) -> tuple[str, ...]:
    """The variables the code's policy is compared on: the names its ``abstract()`` gives.
    O(1) (an empty policy)."""
    return tuple(sorted(make_policy(policy, num_blocks).checks().abstract()))
