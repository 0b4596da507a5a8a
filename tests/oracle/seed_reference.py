"""The seed's CacheEntry and EmbeddingCache -- a TEST ORACLE.

The one verbatim copy lives in ``embedding_cache_checker.bench.seed_reference`` (the
bench measures the package beside it at run time); the tests import it from
here, so that ``tests/test_seed_differential.py`` and the planted-bug tests
keep one name for it.
"""

from embedding_cache_checker.bench.seed_reference import CacheEntry, EmbeddingCache

__all__ = ["CacheEntry", "EmbeddingCache"]
