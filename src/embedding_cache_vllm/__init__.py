"""embedding_cache_vllm: vLLM 0.33.0's CPU EC connector on the verified cache.

vLLM loads it by name: ``ECTransferConfig(ec_connector="VerifiedECCPUConnector",
ec_connector_module_path="embedding_cache_vllm.connector", ec_role=...,
ec_connector_extra_config={"ec_cpu_bytes": ..., "embedding_cache": {...}})``.

- ``connector`` -- ``VerifiedECCPUConnector``: vLLM's ``ECCPUConnector`` whose
  scheduler side is ``VerifiedECCPUScheduler`` (the worker side is vLLM's).
- ``scheduler`` -- ``VerifiedECCPUScheduler``: vLLM's ``ECCPUScheduler`` holding
  the project's ``EmbeddingCache`` and following the safe protocol
  (spec/PROTOCOLS.md sections 4 and 5: the check leases a hit, the lease is its
  load's pin, nothing is saved for an item the engine did not compute).
- ``options`` -- the ``"embedding_cache"`` options of ``ec_connector_extra_config``,
  parsed and checked (no vLLM import).
- ``version`` -- the one vLLM release supported (no vLLM import until asked).

What the plugin overrides in vLLM, method by method, and why: docs/VLLM.md.
Importing this package imports nothing of vLLM; ``connector`` and ``scheduler`` do.
"""
