"""vLLM's own factory loads the plugin by name; its options reach the cache, or stop
vLLM at start-up with an error naming the option; another vLLM version is refused.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, cast

import pytest

from embedding_cache import CacheEntry, EmbeddingCache
from embedding_cache_checker import upstream
from embedding_cache_checker.engine import Settings, require_vllm
from embedding_cache_checker.engine.stubs import fake_region, vllm_config
from embedding_cache_vllm.options import CacheOptionError, CacheOptions, parse_options
from embedding_cache_vllm.version import SUPPORTED_VLLM_VERSION, UnsupportedVllmError

ROOT = Path(__file__).resolve().parents[2]


def create(options: Any, **extra: Any) -> Any:
    """``ECConnectorFactory.create_connector`` for the scheduler role, as vLLM's
    ``Scheduler.__init__`` calls it, with the plugin named in the config."""
    require_vllm()
    from vllm.distributed.ec_transfer.ec_connector.base import ECConnectorRole
    from vllm.distributed.ec_transfer.ec_connector.factory import ECConnectorFactory

    settings = Settings(
        num_blocks=1_024,
        connector="VerifiedECCPUConnector",
        module_path="embedding_cache_vllm.connector",
    )
    config = vllm_config(settings)
    transfer = config.ec_transfer_config
    assert transfer is not None
    transfer.ec_connector_extra_config["embedding_cache"] = options
    transfer.ec_connector_extra_config.update(extra)
    with fake_region():
        return ECConnectorFactory.create_connector(config, ECConnectorRole.SCHEDULER)


def test_the_factory_creates_the_plugin_and_its_options_reach_the_cache() -> None:
    from embedding_cache_vllm.connector import VerifiedECCPUConnector, VerifiedECCPUScheduler

    given = {
        "eviction": "s3fifo",
        "allocator": "extents",
        "contiguity": "4",  # strings, as from the command line
        "admission": "doorkeeper",
        "load_lease_seconds": "12.5",
    }
    connector = create(given)
    assert type(connector) is VerifiedECCPUConnector
    sched = connector.connector_scheduler
    assert type(sched) is VerifiedECCPUScheduler
    cache = sched.cache
    assert cast(object, sched._cache) is cache and type(cache) is EmbeddingCache
    assert (cache.eviction, cache.allocator, cache.contiguity) == ("s3fifo", "extents", 4)
    assert cache.admission == "doorkeeper" and cache.num_blocks == 1_024
    assert sched.options.load_lease_seconds == 12.5
    assert connector.has_pending_push_work() is False
    connector.shutdown()


def test_without_options_the_cache_is_the_seed_s_configuration() -> None:
    cache = create(None).connector_scheduler.cache
    assert (cache.eviction, cache.allocator, cache.contiguity, cache.admission) == (
        "fifo",
        "stack",
        0,
        None,
    )


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"evicton": "gdsf"}, "'evicton'"),
        ({"eviction": "lru"}, "['eviction']"),
        ({"allocator": "buddy"}, "['allocator']"),
        ({"contiguity": "-1"}, "['contiguity']"),
        ({"contiguity": 4}, "['contiguity']"),  # > 0 needs the extents allocator
        ({"admission": "bouncer"}, "['admission']"),
        ({"load_lease_seconds": "0"}, "['load_lease_seconds']"),
        ({"load_lease_seconds": "soon"}, "['load_lease_seconds']"),
        ("[1, 2]", "must be a dict"),
    ],
)
def test_a_bad_option_stops_vllm_at_start_up_naming_it(options: Any, named: str) -> None:
    with pytest.raises(CacheOptionError) as caught:
        create(options)
    assert named in str(caught.value) and "embedding_cache" in str(caught.value)


def test_another_vllm_version_is_refused_naming_both(monkeypatch: pytest.MonkeyPatch) -> None:
    require_vllm()
    import vllm

    monkeypatch.setattr(vllm, "__version__", "0.34.1")
    with pytest.raises(UnsupportedVllmError) as caught:
        create({})
    assert "0.34.1" in str(caught.value) and SUPPORTED_VLLM_VERSION in str(caught.value)


def test_nixl_s_producer_session_is_given_the_project_s_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """NIXL needs the nixl package (absent here): upstream's setup is replaced by one
    that records the ``_cache`` it would hand to ``ProducerSession``."""
    require_vllm()
    from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler

    seen: list[object] = []
    monkeypatch.setattr(ECCPUScheduler, "_setup_nixl", lambda self, _c: seen.append(self._cache))
    sched = create({"eviction": "gdsf"}, ec_enable_nixl="true").connector_scheduler
    assert seen == [sched.cache] and sched.cache.eviction == "gdsf"


def test_the_options_parse_as_documented() -> None:
    assert parse_options({}) == CacheOptions()
    assert parse_options({"embedding_cache": '{"eviction": "sieve", "admission": "none"}'}) == (
        CacheOptions(eviction="sieve", admission=None)
    )
    assert parse_options({"embedding_cache": {"contiguity": " 2 ", "allocator": "extents"}}) == (
        CacheOptions(allocator="extents", contiguity=2)
    )
    with pytest.raises(CacheOptionError, match="not a JSON object"):
        parse_options({"embedding_cache": "{eviction"})
    with pytest.raises(CacheOptionError, match=r"\['contiguity'\]"):
        parse_options({"embedding_cache": {"contiguity": True}})


def test_the_supported_version_is_the_project_s_pin() -> None:
    assert SUPPORTED_VLLM_VERSION == upstream.VLLM_VERSION
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"vllm=={SUPPORTED_VLLM_VERSION}" in project["optional-dependencies"]["vllm"]


def test_the_shape_of_a_lease_is_the_entry_s() -> None:
    sched = create({}).connector_scheduler
    entry = sched.cache.alloc("k", 3, (3, 16))
    assert isinstance(entry, CacheEntry)
    sched.cache.mark_ready("k")
    assert sched.has_cache_item("k") and sched._check_leases["k"].shape == (3, 16)
