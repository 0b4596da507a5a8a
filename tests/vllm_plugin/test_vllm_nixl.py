"""vLLM 0.33's NIXL consumer read on its real code: the leaks TLC predicts, and the plugin's fix.

Each class is named after the TLC model that predicts the leak (spec/PROTOCOLS.md
section 6.1, ``tla/protocol/EmbeddingCacheNixlRead.tla``) and shows it on vLLM
0.33's own ``ECCPUScheduler`` and ``ConsumerSession``, unchanged, with only the
transports stubbed (``nixl_stubs``): a not-ready entry that nothing ever settles,
so ``has_held_entries()`` stays True after any number of polls (SaveResolvesProp
violated). The same steps on the plugin (``VerifiedECCPUScheduler``) leave no
not-ready entry and nothing held once they settle; and with the override that
fixes it put back to upstream's method, the plugin leaks again.
"""

from __future__ import annotations

from typing import Any

import pytest
from nixl_stubs import PEER, ack_ok, announced, nixl_consumer

from embedding_cache_checker.engine import FakeClock

#: Polls and steps after which a leak is still a leak (any number would do).
POLLS = 50


def not_ready(sched: Any, key: str) -> bool:
    """``key``'s entry is present and not ready (held, unevictable)."""
    entry = sched._cache.get(key)
    return entry is not None and not entry.ready


def poll_and_step(sched: Any, clock: FakeClock | None = None, seconds: float = 1.0) -> None:
    """``POLLS`` times: the clock moves on, the sessions are polled, a step ends."""
    for _ in range(POLLS):
        if clock is not None:
            clock.advance(seconds)
        sched._poll_step()
        sched.build_connector_meta(None)


def revert(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Put the plugin's override ``name`` back to upstream's method."""
    from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler

    from embedding_cache_vllm.scheduler import VerifiedECCPUScheduler

    monkeypatch.setattr(VerifiedECCPUScheduler, name, getattr(ECCPUScheduler, name))


START_ERRORS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "no peer_port": ({"peer_port": None}, {}),
    "a bad peer_port": ({"peer_port": "http"}, {}),
    "connect raises": ({}, {"refuse": True}),
}


class TestMCNixlReadStartError:
    """MCNixlReadStartError (SaveResolvesProp): ``_start_xfer`` allocs the entry and then
    reads ``int(info["peer_port"])``, connects and builds the ``ConsumerSession``
    outside the ``try`` that discards on an error; ``_admit_item`` checks
    ``peer_host``, ``size_bytes`` and ``shape`` but not ``peer_port``."""

    @staticmethod
    def start_fails(kind: str, case: str) -> Any:
        announcement, transport = START_ERRORS[case]
        sched = nixl_consumer(kind, **transport)
        req = announced("r", "h", 2, **announcement)
        assert sched._nixl_consumer_admit(req, 0) is False  # as upstream: the request fails
        assert sched.take_unavailable_requests() == {"r"}
        return sched

    @pytest.mark.parametrize("case", list(START_ERRORS))
    def test_upstream_leaks_the_entry_for_ever(self, case: str) -> None:
        sched = self.start_fails("upstream", case)
        assert not_ready(sched, "h") and "h" not in sched._in_flight and not sched._sessions
        poll_and_step(sched)
        # A later request for the item waits on the leaked entry, never reads it.
        later = announced("r2", "h", 2)
        assert sched._nixl_consumer_admit(later, 0) is False and "h" not in sched._in_flight
        poll_and_step(sched)
        assert not_ready(sched, "h") and sched._cache.has_held_entries()

    @pytest.mark.parametrize("case", list(START_ERRORS))
    def test_the_plugin_discards_it_and_a_later_request_reads_it(self, case: str) -> None:
        sched = self.start_fails("plugin", case)
        assert sched.cache.get("h") is None and not sched.cache.has_held_entries()
        sched._transport.refuse = False
        later = announced("r2", "h", 2)
        assert sched._nixl_consumer_admit(later, 0) is False and "h" in sched._in_flight

    @pytest.mark.parametrize("kind", ["upstream", "plugin"])
    def test_a_request_with_local_media_falls_back_as_upstream(self, kind: str) -> None:
        from types import SimpleNamespace

        sched = nixl_consumer(kind)
        sched._metadata_resolver._cache["image"] = set()  # no field is metadata-only
        req = announced("r", "h", 2, peer_port=None)
        req.mm_features[0].data = {"pixel_values": SimpleNamespace(data=b"media")}
        assert sched._nixl_consumer_admit(req, 0) is True  # the encoder runs locally
        assert req.ec_transfer_params == {} and sched.take_unavailable_requests() == set()
        assert not_ready(sched, "h") == (kind == "upstream")
        assert sched._cache.has_held_entries() == (kind == "upstream")

    def test_without_the_override_the_plugin_leaks(self, monkeypatch: pytest.MonkeyPatch) -> None:
        revert(monkeypatch, "_start_xfer")
        sched = self.start_fails("plugin", "no peer_port")
        poll_and_step(sched)
        assert not_ready(sched, "h") and sched.cache.has_held_entries()

    def test_an_error_inside_upstream_s_try_is_discarded_once(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``start_xfer`` raising is upstream's own discard; the plugin adds none."""
        from vllm.distributed.ec_transfer.ec_connector.cpu.session import ConsumerSession

        def refuse(*_args: Any) -> None:
            raise OSError("send failed")

        monkeypatch.setattr(ConsumerSession, "start_xfer", refuse)
        for kind in ("upstream", "plugin"):
            sched = nixl_consumer(kind)
            assert sched._nixl_consumer_admit(announced("r", "h", 2), 0) is False
            assert sched.take_unavailable_requests() == {"r"}
            assert sched._cache.get("h") is None and not sched._cache.has_held_entries()


def read_in_flight(kind: str, clock: FakeClock | None = None) -> Any:
    """A consumer whose READ of ``h`` (2 blocks) from ``PEER`` is in flight."""
    sched = nixl_consumer(kind, clock)
    assert sched._nixl_consumer_admit(announced("r", "h", 2), 0) is False
    ack_ok(sched, "h", 2)
    sched._poll_step()
    assert sched._sessions[PEER]._xfers["h"].transfer_handle is not None
    assert "h" in sched._in_flight and not_ready(sched, "h")
    return sched


def quarantined(kind: str, clock: FakeClock | None = None) -> Any:
    """A consumer whose READ of ``h`` passed its deadline with the DMA still running
    (quarantined: its entry kept not-ready until the xfer settles)."""
    import time

    sched = read_in_flight(kind, clock)
    session = sched._sessions[PEER]
    session.poll([], time.monotonic() + 21.0)  # the READ's 20 s deadline has passed
    sched._process_session_results(session)
    assert [x.mm_hash for x in session._quarantined] == ["h"] and not_ready(sched, "h")
    return sched


READS = {"in flight": read_in_flight, "quarantined": quarantined}


def peer_down(sched: Any) -> None:
    """The producer's connection drops: the next poll runs ``_on_peer_down``."""
    sched._transport.dead.append(PEER)
    sched._poll_step()
    assert PEER not in sched._sessions and PEER in sched._transport.removed


class TestMCNixlReadPeerDown:
    """MCNixlReadPeerDown (SaveResolvesProp): ``_on_peer_down`` quarantines a READ in
    flight (``on_peer_down``), ``_process_session_results`` keeps its entry not-ready
    until the xfer settles, and ``close()`` releases the handles and clears the
    session's quarantine: nothing reports the xfer settled, nothing discards it."""

    @pytest.mark.parametrize("read", list(READS))
    def test_upstream_leaks_the_entry_for_ever(self, read: str) -> None:
        sched = READS[read]("upstream")
        peer_down(sched)
        assert sched._data.released == sched._data.posted  # close released the handle
        poll_and_step(sched)
        assert not_ready(sched, "h") and sched._cache.has_held_entries()

    @pytest.mark.parametrize("read", list(READS))
    def test_the_plugin_holds_it_for_a_bounded_time_then_discards_it(self, read: str) -> None:
        from embedding_cache_vllm.scheduler import PEER_DOWN_HOLD_S

        clock = FakeClock()
        sched = READS[read]("plugin", clock)
        peer_down(sched)
        # The released handle may still be written by its DMA: the blocks stay held.
        clock.advance(PEER_DOWN_HOLD_S)
        sched._poll_step()
        assert not_ready(sched, "h")
        clock.advance(0.5)
        sched._poll_step()
        assert sched.cache.get("h") is None and not sched.cache.has_held_entries()
        assert sched._dropped_reads == {}

    @pytest.mark.parametrize("name", ["_on_peer_down", "_poll_step"])
    def test_without_the_override_the_plugin_leaks(
        self, name: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        revert(monkeypatch, name)
        clock = FakeClock()
        sched = read_in_flight("plugin", clock)
        peer_down(sched)
        poll_and_step(sched, clock, seconds=10.0)
        assert not_ready(sched, "h") and sched.cache.has_held_entries()

    def test_a_read_waiting_for_its_ack_is_discarded_at_once_as_upstream(self) -> None:
        for kind in ("upstream", "plugin"):
            sched = nixl_consumer(kind)
            assert sched._nixl_consumer_admit(announced("r", "h", 2), 0) is False
            peer_down(sched)
            assert sched._cache.get("h") is None and not sched._cache.has_held_entries()


def read_then_abort(kind: str, state: str) -> Any:
    """vLLM's calls: a request's admission starts the READ of ``h`` (step 1), its next
    admission delivers the ack (step 2); then the request is aborted, and the READ
    ends (``state``: "DONE", or a NIXL error) with no request left to schedule."""
    sched = nixl_consumer(kind)
    req = announced("r", "h", 2)
    assert sched.ensure_cache_available(req, 0) is False
    sched.build_connector_meta(None)
    ack_ok(sched, "h", 2)
    assert sched.ensure_cache_available(req, 0) is False
    sched.build_connector_meta(None)
    assert sched._data.posted and not_ready(sched, "h")
    sched.request_finished(req)
    sched._data.state = state
    return sched


class TestMCNixlReadNoPollFairness:
    """MCNixlReadNoPollFairness (SaveResolvesProp): ``_poll_step`` runs only from
    ``ensure_cache_available``, for a request being scheduled; with none, a READ that
    completed or failed is never processed and its entry stays not-ready."""

    @pytest.mark.parametrize("state", ["DONE", "ERR_REMOTE_DISCONNECT"])
    def test_upstream_leaves_the_entry_not_ready_while_no_request_comes(self, state: str) -> None:
        sched = read_then_abort("upstream", state)
        for _ in range(POLLS):
            sched.build_connector_meta(None)  # the engine steps (NIXL on: push work)
        assert sched.has_pending_push_work()
        assert not_ready(sched, "h") and sched._cache.has_held_entries()
        sched._poll_step()  # what a request would have done: the read settles
        assert not sched._cache.has_held_entries()

    @pytest.mark.parametrize("state", ["DONE", "ERR_REMOTE_DISCONNECT"])
    def test_the_plugin_settles_it_at_the_next_step(self, state: str) -> None:
        sched = read_then_abort("plugin", state)
        sched.build_connector_meta(None)
        entry = sched.cache.get("h")
        assert (entry is not None and entry.ready) == (state == "DONE")
        assert not sched.cache.has_held_entries()

    def test_without_the_override_the_plugin_leaves_it(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from embedding_cache_vllm.scheduler import VerifiedECCPUScheduler

        monkeypatch.setattr(VerifiedECCPUScheduler, "_poll_if_idle", lambda self: None)
        sched = read_then_abort("plugin", "DONE")
        for _ in range(POLLS):
            sched.build_connector_meta(None)
        assert not_ready(sched, "h") and sched.cache.has_held_entries()

    def test_a_step_that_polled_for_a_request_does_not_poll_again(self) -> None:
        sched = nixl_consumer("plugin")
        polls: list[int] = []

        def poll_dead() -> list[Any]:
            polls.append(1)
            return []

        sched._transport.poll_dead = poll_dead
        sched.ensure_cache_available(announced("r", "h", 2), 0)
        sched.build_connector_meta(None)
        assert len(polls) == 1
        sched.build_connector_meta(None)  # a step without a request: the plugin polls
        assert len(polls) == 2
