"""embedding-cache: a formally specified, contract-checked block cache for embeddings.

A drop-in for vLLM's encoder-cache connector ``EmbeddingCache``: a fixed pool
of block ids; entries keyed by content hash go not-ready -> ready (evictable)
-> pinned; ready+unpinned entries are evicted by a swappable policy
(``EVICTION_POLICIES``; "fifo", the seed's order, by default), with an
opt-in admission filter (``ADMISSION_FILTERS``) and pin leases. Set
``EMBEDDING_CACHE_CHECKED=1`` before import for the contract-checked build.
"""

from __future__ import annotations

from .admission import ADMISSION_FILTERS, AdmissionFilter, Doorkeeper
from .allocators import ALLOCATORS, DEFAULT_ALLOCATOR
from .build import BUILD_NAME, CHECKED, FULL_SWEEP
from .cache import EmbeddingCache
from .entry import CacheEntry
from .errors import (
    AlreadyReadyError,
    CacheError,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    ForeignLeaseError,
    InvariantViolationError,
    LifecycleError,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
)
from .leases import Lease
from .policies import (
    EVICTION_POLICIES,
    EvictionPolicy,
    FifoPolicy,
    GdsfPolicy,
    S3FifoPolicy,
    SievePolicy,
)

__all__ = [
    "ADMISSION_FILTERS",
    "ALLOCATORS",
    "BUILD_NAME",
    "CHECKED",
    "DEFAULT_ALLOCATOR",
    "EVICTION_POLICIES",
    "FULL_SWEEP",
    "AdmissionFilter",
    "AlreadyReadyError",
    "CacheEntry",
    "CacheError",
    "CapacityError",
    "DiscardHeldError",
    "Doorkeeper",
    "DuplicateAllocError",
    "EmbeddingCache",
    "EvictionPolicy",
    "FifoPolicy",
    "ForeignLeaseError",
    "GdsfPolicy",
    "InvariantViolationError",
    "Lease",
    "LifecycleError",
    "NotPinnedError",
    "NotReadyError",
    "S3FifoPolicy",
    "SievePolicy",
    "UnknownKeyError",
]

__version__ = "0.1.0"
