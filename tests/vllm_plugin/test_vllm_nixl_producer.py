"""vLLM 0.33's NIXL producer session: its pin lease kept outside the cache, and the
plugin's ``LeasedProducerSession``, whose grants are the cache's leases.

vLLM's ``ProducerSession`` pins a granted entry (``pin_if_ready``) and keeps the
grant's 30 s deadline itself (``PRODUCER_PIN_LEASE_S``); only its sweep, run by
``poll_step``, releases a grant whose consumer never completes
(MCProducerSessionNoPollFairness, PinReleasedProp: the obligation rests on the
polls). The plugin's session takes ``cache.lease(mm_hash, PRODUCER_PIN_LEASE_S)``
instead: the cache ends the pin itself at the lease's deadline, polled or not, and
completion, a re-grant and ``close`` release it. Both sessions run here on the
project's cache with the transports stubbed (``nixl_stubs``); the plugin's is
also shown to be the one ``_setup_nixl`` builds.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from nixl_stubs import ClientTransport, ProducerData, ServerTransport

from embedding_cache import EmbeddingCache, NotPinnedError
from embedding_cache_checker.engine import FakeClock, Settings, require_vllm
from embedding_cache_checker.engine.stubs import FakeRegion, fake_region, vllm_config

LEASE = 30.0  # vLLM's PRODUCER_PIN_LEASE_S


def ready_cache(clock: FakeClock, *keys: str) -> EmbeddingCache:
    """The project's cache with each of ``keys`` saved (ready, 1 block)."""
    cache = EmbeddingCache(4, clock=clock)
    for key in keys:
        cache.alloc(key, 1, (1, 16))
        cache.mark_ready(key)
    return cache


def session(kind: str, cache: EmbeddingCache) -> Any:
    """vLLM's ``ProducerSession`` ("upstream") or the plugin's, on ``cache``."""
    require_vllm()
    from vllm.distributed.ec_transfer.ec_connector.cpu.session import ProducerSession

    from embedding_cache_vllm.producer import LeasedProducerSession

    made = {"upstream": ProducerSession, "plugin": LeasedProducerSession}[kind]
    return made(transport=ServerTransport(), data=ProducerData(), cache=cache, compat_hash="compat")


def pins(cache: EmbeddingCache, key: str) -> int:
    entry = cache.get(key)
    assert entry is not None
    return entry.pin_count


def statuses(producer: Any) -> list[str]:
    """The replies sent so far, by status name; then forgotten."""
    sent = [ack.status.name for _, ack in producer._transport.replies]
    producer._transport.replies.clear()
    return sent


class TestMCProducerSessionNoPollFairness:
    """MCProducerSessionNoPollFairness (PinReleasedProp): a consumer that never completes
    its READ leaves the grant's pin to the session's sweep, run only by a poll."""

    def test_upstream_s_pin_outlives_its_lease_until_a_poll_sweeps_it(self) -> None:
        clock = FakeClock()
        cache = ready_cache(clock, "h")
        producer = session("upstream", cache)
        producer._transport.request("s1", "h")
        producer.poll_step()
        assert statuses(producer) == ["OK"] and pins(cache, "h") == 1
        clock.advance(LEASE + 1.0)  # no poll: the session's deadline is its own
        assert pins(cache, "h") == 1 and cache.has_held_entries()

    def test_the_plugin_s_pin_ends_at_the_lease_deadline_polled_or_not(self) -> None:
        clock = FakeClock()
        cache = ready_cache(clock, "h")
        producer = session("plugin", cache)
        producer._transport.request("s1", "h")
        producer.poll_step()
        assert statuses(producer) == ["OK"] and pins(cache, "h") == 1
        with pytest.raises(NotPinnedError):
            cache.unpin("h")  # the pin is the lease's: a plain unpin cannot take it
        clock.advance(LEASE)
        assert pins(cache, "h") == 1  # a deadline equal to the clock still holds
        clock.advance(0.5)
        assert pins(cache, "h") == 0 and not cache.has_held_entries()
        producer.poll_step()  # the sweep forgets the ended grant
        assert producer._active_xfers == {} and producer.grants.leases == {}
        producer._data.notify("s1", "h")  # a late completion releases nothing
        producer.poll_step()
        assert pins(cache, "h") == 0


class TestLeasedProducerSession:
    """The plugin's session keeps vLLM's replies and releases each grant's lease once."""

    def test_a_completed_read_releases_its_lease(self) -> None:
        cache = ready_cache(FakeClock(), "h")
        producer = session("plugin", cache)
        producer._transport.request("s1", "h")
        producer._transport.request("s2", "h")
        producer.poll_step()
        assert statuses(producer) == ["OK", "OK"] and pins(cache, "h") == 2
        producer._data.notify("s2", "h")
        producer.poll_step()
        assert pins(cache, "h") == 1 and list(producer._active_xfers) == ["s1:h"]
        assert list(producer.grants.leases) == ["s1:h"]
        producer._data.notify("s1", "h")
        producer.poll_step()
        assert pins(cache, "h") == 0 and producer.grants.leases == producer.grants.keys == {}

    def test_a_regrant_replaces_the_old_lease(self) -> None:
        cache = ready_cache(FakeClock(), "h")
        producer = session("plugin", cache)
        producer._transport.request("s1", "h")
        producer.poll_step()
        first = producer.grants.leases["s1:h"]
        producer._transport.request("s1", "h")  # the peer timed out and asks again
        producer.poll_step()
        assert statuses(producer) == ["OK", "OK"] and pins(cache, "h") == 1
        assert not first.held and producer.grants.leases["s1:h"].held

    def test_a_miss_and_a_save_in_flight_are_nacked_holding_nothing(self) -> None:
        cache = EmbeddingCache(4, clock=FakeClock())
        cache.alloc("saving", 1, (1, 16))
        producer = session("plugin", cache)
        producer._transport.request("s1", "absent")
        producer._transport.request("s1", "saving")
        producer.poll_step()
        assert statuses(producer) == ["NACK_MISSING", "NACK_NOT_READY"]
        assert producer.grants.leases == {} and producer._active_xfers == {}

    def test_close_releases_every_lease(self) -> None:
        cache = ready_cache(FakeClock(), "h", "g")
        producer = session("plugin", cache)
        for peer, key in [("s1", "h"), ("s2", "h"), ("s1", "g")]:
            producer._transport.request(peer, key)
        producer.poll_step()
        assert pins(cache, "h") == 2 and pins(cache, "g") == 1
        producer.close()
        assert not cache.has_held_entries() and producer._transport.closed
        assert producer.grants.leases == {} and producer._active_xfers == {}

    def test_a_reply_that_raises_after_the_grant_keeps_it_leased(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """vLLM files the grant before it builds the reply: the lease is filed with it."""
        cache = ready_cache(FakeClock(), "h")
        producer = session("plugin", cache)

        def broken() -> bytes:
            raise RuntimeError("no metadata")

        monkeypatch.setattr(producer._data, "get_agent_metadata", broken)
        producer._transport.request("s1", "h")
        with pytest.raises(RuntimeError):
            producer.poll_step()
        assert list(producer._active_xfers) == list(producer.grants.leases) == ["s1:h"]
        producer.close()
        assert not cache.has_held_entries()


@pytest.mark.parametrize("kind", ["upstream", "plugin"])
def test_setup_nixl_builds_the_plugin_s_session(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_setup_nixl`` with NIXL's agent and the ZMQ sockets stubbed (``nixl`` is absent):
    upstream builds vLLM's ``ProducerSession``, the plugin a ``LeasedProducerSession``
    on the project's cache, over the same transport and data."""
    require_vllm()
    import vllm.distributed.ec_transfer.ec_connector.cpu.control.zmq as zmq_transports
    import vllm.distributed.ec_transfer.ec_connector.cpu.data.nixl as nixl_data
    import vllm.distributed.nixl_utils as nixl_utils
    from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler
    from vllm.distributed.ec_transfer.ec_connector.cpu.session import ProducerSession

    from embedding_cache_vllm.producer import LeasedProducerSession
    from embedding_cache_vllm.scheduler import VerifiedECCPUScheduler

    monkeypatch.setattr(nixl_utils, "NixlWrapper", object, raising=False)
    monkeypatch.setattr(nixl_utils, "nixl_agent_config", dict, raising=False)
    monkeypatch.setattr(nixl_data, "NixlDataTransport", lambda **_kw: ProducerData())
    monkeypatch.setattr(zmq_transports, "ZmqServerTransport", lambda **_kw: ServerTransport())
    monkeypatch.setattr(zmq_transports, "ZmqClientTransport", ClientTransport)
    monkeypatch.setattr(FakeRegion, "blocks", SimpleNamespace(data_ptr=lambda: 0), raising=False)
    config = vllm_config(Settings(num_blocks=64))
    assert config.ec_transfer_config is not None
    config.ec_transfer_config.ec_connector_extra_config["ec_enable_nixl"] = True
    with fake_region():
        sched: Any = VerifiedECCPUScheduler(config) if kind == "plugin" else ECCPUScheduler(config)
    producer = sched._producer_session
    if kind == "plugin":
        assert type(producer) is LeasedProducerSession
        assert producer.grants.cache is sched.cache and producer._data is sched._data
    else:
        assert type(producer) is ProducerSession and producer._cache is sched._cache
    assert isinstance(producer._transport, ServerTransport)
    sched._cache.alloc("h", 1, (1, 16))
    sched._cache.mark_ready("h")
    producer._transport.request("s1", "h", sched._compat_hash)
    sched.build_connector_meta(None)  # the producer's poll_step, every step
    assert statuses(producer) == ["OK"] and sched._cache.has_held_entries()
    sched.shutdown()  # closes the session: its grant's pin is released
    assert not sched._cache.has_held_entries()
