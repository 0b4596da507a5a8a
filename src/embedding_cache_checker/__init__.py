"""embedding-cache's checker: TLC launching, verify, tracing and the CLI.

It stands beside the runtime package ``embedding_cache`` and reaches it only
through its public API and its one documented verification interface
(``embedding_cache.verification``). Nothing in the runtime imports it, so an
engine that vendors the cache copies ``src/embedding_cache/`` alone.
"""
