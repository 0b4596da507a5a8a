"""What vulture (tests/test_code_health.py, 60% confidence) calls unused, and why each is alive.

vulture reads names, not frameworks: each entry below is used by something it
cannot see. This file is only parsed (by vulture), never imported.
"""

# Hypothesis calls a RuleBasedStateMachine's @rule methods by name, and its teardown
# (tests/test_stateful.py, tests/verify/test_traces.py).
_.any_key
_.bad_arguments
_.bad_lease_arguments
_.later
_.leases_agree
_.lease_life
_.teardown

# pytest reads a module's pytestmark, runs autouse fixtures by their decorator and calls
# a conftest's hooks by name (tests/test_builds.py, tests/tlc/test_models.py,
# tests/test_threads.py, tests/conftest.py).
pytestmark
_switch_often
pytest_collection_modifyitems
pytest_sessionfinish

# A context manager's __exit__ must take (type, value, traceback) even when it uses
# none of them (tests/test_lock_structure.py).
tb

# Renamed or re-typed objects: the interpreter, inspect, icontract and CrossHair read
# __qualname__ and __class__ (contracts, tracing, the planted bugs, CacheState.copy).
_.__qualname__
_.__class__

# A policy's parts are found by name (embedding_cache_checker.policy_parts.policy_part):
# each policy's checker adapter, planted bugs and reference model.
ADAPTER
BUGS
MODEL

# vLLM calls the connector's construction seam by name (embedding_cache_vllm.connector).
_._make_scheduler

# vLLM's ProducerSession.poll calls its sweep by name (embedding_cache_vllm.producer), and
# vLLM's NIXL code calls the stubbed transports' methods and reads the scheduler's ack
# timeout (tests/vllm_plugin/nixl_stubs.py).
_._sweep_timeouts
_._ack_timeout_s
_.connect
_.add_remote_peer
_.remove_remote_peer
_.post_read
_.check_xfer_state
_.release_xfer_handle
_.deregister
_.send
_.get_agent_metadata
_.get_mem_descriptor
_.get_new_notifs

# vLLM reads these by name from the harness's stand-ins: the region's cleanup, the
# measured encoder widths and a request's transfer params (embedding_cache_checker.engine).
_.cleanup
_.mm_encoder_output_widths
_.ec_transfer_params

# pytest calls these by name from tests/conftest.py: an autouse fixture (the bench's
# frozen heap) and the hook that marks the fast tier's tests.
_bench_heap_frozen
pytest_itemcollected

# vLLM reads these settings of the real loop's configs (engine_loop.engine), and the
# tokenizer and model config transformers saves (engine_loop.model_dir); vLLM's
# ECConnectorFactory loads the planted and traced connectors by class name
# (engine_loop.planted, engine_loop.traced).
_.max_num_encoder_input_tokens
_.num_gpu_blocks
_.tensor_parallel_size
_.distributed_executor_backend
_.pre_tokenizer
_.architectures
NoKeepRuleConnector
EarlyReleaseConnector
TracedVllmConnector
TracedPluginConnector
