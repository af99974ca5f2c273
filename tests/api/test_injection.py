"""Injection hubs: per-chat state, listener order, failing listeners, idempotent unsubscribe."""

from __future__ import annotations

import logging

import attrs
import pytest

from extension_registry import ExtensionRegistry
from memgraph_plugin.api.injection import InjectionHub, hub_for
from memgraph_plugin.engine.model.views import InjectionState
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.service import SERVICE_NAME, MemoryGraph


@attrs.frozen
class Ctx:
    chat_id: str | None
    host: object = None


class FakeHostWithoutService:
    """A host object the memory graph never started on (only identity matters here)."""


class FakeHostWithService:
    """A host object with a `MemoryGraph` published in its registry (as the plugin does)."""

    def __init__(self) -> None:
        self.registry = ExtensionRegistry()
        self.service = MemoryGraph(self, settings={})
        self.registry.register(SERVICE_NAME, self.service)


def test_listeners_run_in_order_with_the_same_snapshot():
    hub = InjectionHub("c1")
    seen = []
    hub.subscribe(lambda s: seen.append(("a", s)))
    hub.subscribe(lambda s: seen.append(("b", s)))
    state = hub.set(always_inject_ids=["n_1"], recall_selected_ids={"n_2"}, visible_ids=("n_3",))
    assert [name for name, _ in seen] == ["a", "b"]
    assert seen[0][1] is seen[1][1] is state is hub.state
    assert state == InjectionState({"n_1"}, {"n_2"}, {"n_3"})
    assert isinstance(state.always_inject_ids, frozenset)


def test_failing_listener_is_logged_and_skipped(caplog):
    hub = InjectionHub("c1")
    seen = []

    def broken(state):
        raise RuntimeError("listener exploded")

    hub.subscribe(broken)
    hub.subscribe(seen.append)
    with caplog.at_level(logging.WARNING):
        hub.set(recall_selected_ids=["n_1"])
    assert len(seen) == 1
    assert "listener" in caplog.text and "exploded" in caplog.text


def test_unsubscribe_is_idempotent():
    hub = InjectionHub()
    seen = []
    unsubscribe = hub.subscribe(seen.append)
    other = hub.subscribe(lambda s: seen.append("other"))
    unsubscribe()
    unsubscribe()
    hub.set(visible_ids=["x"])
    assert seen == ["other"]
    other()
    other()
    assert hub.listener_count == 0


def test_set_keeps_unspecified_sets_and_checks_arguments():
    hub = InjectionHub()
    hub.set(always_inject_ids=["a"], recall_selected_ids=["b"])
    hub.set(visible_ids=["v"])
    assert hub.state == InjectionState({"a"}, {"b"}, {"v"})
    with pytest.raises(MemoryGraphError) as err:
        hub.set(visible_ids="abc")
    assert err.value.code == "BAD_ARGS" and err.value.message.startswith("visible_ids")
    with pytest.raises(MemoryGraphError) as err:
        hub.subscribe("not callable")
    assert err.value.message.startswith("callback")
    with pytest.raises(MemoryGraphError):
        hub.update({"always_inject_ids": []})


def test_forward_gets_every_update_and_its_failure_is_contained(caplog):
    got = []
    hub = InjectionHub("c9", forward=lambda chat, state: got.append((chat, state)))
    state = hub.set(recall_selected_ids=["n_1"])
    assert got == [("c9", state)]
    bad = InjectionHub("c9", forward=lambda chat, state: 1 / 0)
    with caplog.at_level(logging.WARNING):
        assert bad.set(recall_selected_ids=["n_1"]).recall_selected_ids == {"n_1"}
    assert "forward" in caplog.text


def test_hub_for_is_per_chat_and_private_without_ctx():
    host = FakeHostWithService()
    a1 = hub_for(Ctx("a", host))
    assert hub_for(Ctx("a", host)) is a1
    assert hub_for(Ctx("b", host)) is not a1
    assert hub_for(Ctx("a", FakeHostWithoutService())) is not a1
    assert hub_for(None) is not hub_for(None)
    assert hub_for(Ctx(None, host)) is not hub_for(Ctx(None, host))


def test_hub_for_uses_the_hosts_service():
    host = FakeHostWithService()
    service = host.service
    try:
        assert hub_for(Ctx("c1", host)) is service.hub("c1")
        assert service.injection_state("c1") == InjectionState()
    finally:
        service.close()
