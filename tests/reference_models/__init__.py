"""Reference models of the cache and of each eviction policy, for the stateful test.

Written from spec/SPEC.md and spec/POLICIES.md, as plainly as
possible, and sharing no code with ``embedding_cache`` (nothing here imports
it except the error types the core model names): a model that reused the
implementation's data structures would agree with its bugs.

* ``core.Model``: the policy-agnostic cache (entries, free count, misuse),
  calling a policy model's hooks on the events the draft names;
* one module per policy, named after it (``fifo``, ``gdsf``, ...), whose
  ``MODEL`` is one deliberately simple model of that ordering rule, with the
  variables the policy's TLA+ module (and ``PolicyChecks.abstract``) names.

``REFERENCE_MODELS`` maps each policy name of the registry
(``embedding_cache.EVICTION_POLICIES``, the one list of policies; only its
names are read) to its model's constructor (``num_blocks`` and the policy's
keyword parameters): a new policy adds its module here and edits nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.policy_parts import policy_part

from .base import PolicyModel
from .core import ExpectedError, Model, ModelEntry


def reference_model(policy: str) -> Callable[..., PolicyModel]:
    """The reference model of ``policy``: ``MODEL`` of the module named after it.

    Raises:
        LookupError: the policy has no reference model module.
    """
    model = policy_part(__name__, policy, "MODEL", "reference model (tests/reference_models/)")
    if not callable(model):
        raise LookupError(f"{__name__}.{policy}.MODEL must build a PolicyModel")
    return model


#: Policy name -> its reference model's constructor (num_blocks, **parameters).
REFERENCE_MODELS: dict[str, Callable[..., PolicyModel]] = {
    name: reference_model(name) for name in EVICTION_POLICIES
}

__all__ = [
    "REFERENCE_MODELS",
    "ExpectedError",
    "Model",
    "ModelEntry",
    "PolicyModel",
    "reference_model",
]
