"""Reference models of the cache and of each eviction policy, for the stateful test.

Written from spec/SPEC.md and spec/POLICIES.md, as plainly as
possible, and sharing no code with ``embedding_cache`` (nothing here imports
it except the error types the core model names): a model that reused the
implementation's data structures would agree with its bugs.

* ``core.Model``: the policy-agnostic cache (entries, free count, misuse),
  calling a policy model's hooks on the events the draft names;
* ``fifo.FifoModel``, ``gdsf.GdsfModel``, ``s3fifo.S3FifoModel``: one
  deliberately simple model of each ordering rule, with the variables the
  policy's TLA+ module (and ``EvictionPolicy.abstract``) names.

``REFERENCE_MODELS`` maps each policy name to its model's constructor
(``num_blocks`` and the policy's keyword parameters).
"""

from __future__ import annotations

from collections.abc import Callable

from .base import PolicyModel
from .core import ExpectedError, Model, ModelEntry
from .fifo import FifoModel
from .gdsf import GdsfModel
from .s3fifo import S3FifoModel

#: Policy name -> its reference model's constructor (num_blocks, **parameters).
REFERENCE_MODELS: dict[str, Callable[..., PolicyModel]] = {
    "fifo": FifoModel,
    "gdsf": GdsfModel,
    "s3fifo": S3FifoModel,
}

__all__ = [
    "REFERENCE_MODELS",
    "ExpectedError",
    "FifoModel",
    "GdsfModel",
    "Model",
    "ModelEntry",
    "PolicyModel",
    "S3FifoModel",
]
