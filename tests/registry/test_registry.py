"""The extension registry: owners, versions, subscriptions, teardown by owner, threads."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import extension_registry
from extension_registry import (
    ExtensionRegistry,
    RegistryError,
    get_extension_api,
    register_extension_api,
    unregister_extension_api,
)


def test_register_get_and_entry_fields() -> None:
    registry = ExtensionRegistry()
    api = object()
    entry = registry.register("memory-graph", api, owner="memgraph", version="1.0")
    assert registry.get("memory-graph") is api
    assert entry == registry.entry("memory-graph")
    assert (entry.owner, entry.version) == ("memgraph", "1.0")
    assert registry.names() == ["memory-graph"]
    assert "memory-graph" in registry and len(registry) == 1


def test_missing_and_odd_names_give_none_without_raising() -> None:
    registry = ExtensionRegistry()
    assert registry.get("nope") is None
    assert registry.entry("nope") is None
    assert registry.get(["unhashable"]) is None  # type: ignore[arg-type]
    assert registry.get(None) is None  # type: ignore[arg-type]

    class BrokenHash:
        def __hash__(self) -> int:
            raise ValueError("no hash for you")

    class BrokenStr(str):
        def __hash__(self) -> int:
            raise RuntimeError("no hash for you either")

    registry.register("x", 1)
    for odd in (BrokenHash(), BrokenStr("x"), 3, b"x"):
        assert registry.get(odd) is None  # type: ignore[arg-type]
        assert odd not in registry


def test_other_owner_gets_a_clear_error_and_the_entry_stays() -> None:
    registry = ExtensionRegistry()
    first = object()
    registry.register("tools", first, owner="scout")
    with pytest.raises(RegistryError) as info:
        registry.register("tools", object(), owner="curator")
    message = str(info.value)
    assert "'tools'" in message and "'scout'" in message and "'curator'" in message
    assert registry.get("tools") is first


def test_same_owner_replaces() -> None:
    registry = ExtensionRegistry()
    registry.register("tools", "v1", owner="scout", version="1")
    registry.register("tools", "v2", owner="scout", version="2")
    assert registry.get("tools") == "v2"
    assert registry.entry("tools").version == "2"


def test_bad_arguments_are_named() -> None:
    registry = ExtensionRegistry()
    with pytest.raises(ValueError, match="non-empty string"):
        registry.register("", object())
    with pytest.raises(ValueError, match="'x'.*None"):
        registry.register("x", None)
    assert registry.names() == []


def test_unregister_reports_whether_something_was_removed() -> None:
    registry = ExtensionRegistry()
    registry.register("a", 1)
    assert registry.unregister("a") is True
    assert registry.unregister("a") is False
    assert registry.get("a") is None


def test_unregister_owner_removes_everything_it_published() -> None:
    registry = ExtensionRegistry()
    registry.register("b", 1, owner="p1")
    registry.register("a", 2, owner="p1")
    registry.register("c", 3, owner="p2")
    assert registry.owned_by("p1") == ("a", "b")
    assert registry.unregister_owner("p1") == ("a", "b")
    assert registry.names() == ["c"]
    assert registry.unregister_owner("p1") == ()


def test_subscriber_hears_arrival_replacement_and_departure() -> None:
    registry = ExtensionRegistry()
    events: list[tuple[str, object]] = []
    unsubscribe = registry.subscribe("svc", lambda name, api: events.append((name, api)))
    registry.register("other", 0)
    registry.register("svc", 1, owner="p")
    registry.register("svc", 2, owner="p")
    registry.unregister_owner("p")
    assert events == [("svc", 1), ("svc", 2), ("svc", None)]
    unsubscribe()
    unsubscribe()  # idempotent
    registry.register("svc", 3)
    assert events[-1] == ("svc", None)


def test_replay_calls_at_once_when_available() -> None:
    registry = ExtensionRegistry()
    registry.register("svc", "here")
    seen: list[object] = []
    registry.subscribe("svc", lambda _n, api: seen.append(api), replay=True)
    assert seen == ["here"]


def test_a_raising_subscriber_does_not_stop_others_or_the_change(caplog) -> None:
    registry = ExtensionRegistry()
    seen: list[object] = []

    def bad(_name: str, _api: object) -> None:
        raise RuntimeError("boom")

    registry.subscribe("svc", bad)
    registry.subscribe("svc", lambda _n, api: seen.append(api))
    registry.register("svc", 1)
    assert seen == [1]
    assert registry.get("svc") == 1
    assert "'svc'" in caplog.text and "boom" in caplog.text


def test_subscriber_may_use_the_registry() -> None:
    registry = ExtensionRegistry()
    registry.subscribe("a", lambda _n, api: api and registry.register("b", api))
    registry.register("a", 5)
    assert registry.get("b") == 5


def test_module_level_helpers_use_the_default_registry() -> None:
    api = object()
    register_extension_api("test-registry-default", api, owner="tests")
    try:
        assert get_extension_api("test-registry-default") is api
        assert extension_registry.default_registry.get("test-registry-default") is api
        assert get_extension_api("test-registry-missing") is None
    finally:
        assert unregister_extension_api("test-registry-default")


def test_threads_registering_and_reading_agree() -> None:
    registry = ExtensionRegistry()
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def on_change(name: str, api: object) -> None:
        with lock:
            counts[name] = counts.get(name, 0) + 1

    for i in range(8):
        registry.register(f"t{i}", -1, owner=f"o{i}")
        registry.subscribe(f"t{i}", on_change)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            for round_ in range(200):
                registry.register(f"t{i}", round_, owner=f"o{i}")
                assert registry.get(f"t{i}") == round_
                # another owner's name is always refused, whatever that owner is doing
                try:
                    registry.register(f"t{(i + 1) % 8}", -1, owner=f"o{i}")
                except RegistryError:
                    pass
                else:
                    raise AssertionError("took another owner's name")
                registry.register(f"tmp{i}a", round_, owner=f"tmp{i}")
                registry.register(f"tmp{i}b", round_, owner=f"tmp{i}")
                assert registry.unregister_owner(f"tmp{i}") == (f"tmp{i}a", f"tmp{i}b")
                assert len(registry.names()) >= 7
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(worker, range(8)))
    assert errors == []
    assert registry.names() == [f"t{i}" for i in range(8)]
    for i in range(8):
        assert registry.entry(f"t{i}").owner == f"o{i}"
        assert registry.get(f"t{i}") == 199
    assert all(counts[f"t{i}"] == 200 for i in range(8))


def test_subscribe_checks_its_arguments() -> None:
    registry = ExtensionRegistry()
    with pytest.raises(ValueError, match="non-empty string"):
        registry.subscribe("", lambda _n, _a: None)
    with pytest.raises(TypeError, match="'svc'.*callable"):
        registry.subscribe("svc", "not callable")  # type: ignore[arg-type]


def test_a_change_during_a_slow_callback_is_delivered_after_it_in_order() -> None:
    """Thread B replaces the API while thread A's callback still runs: the subscriber must not
    end up believing the older API is current."""
    registry = ExtensionRegistry()
    seen: list[object] = []
    entered, go = threading.Event(), threading.Event()

    def slow(_name: str, api: object) -> None:
        if api == 1:
            entered.set()
            assert go.wait(10)
        seen.append(api)

    registry.subscribe("svc", slow)
    first = threading.Thread(target=registry.register, args=("svc", 1), kwargs={"owner": "p"})
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=registry.register, args=("svc", 2), kwargs={"owner": "p"})
    second.start()
    second.join(10)
    assert not second.is_alive()  # B's change was handed to A; B did not wait for the callback
    go.set()
    first.join(10)
    assert seen == [1, 2]
    assert registry.get("svc") == seen[-1]


def test_nothing_is_delivered_after_unsubscribe_not_even_a_pending_change() -> None:
    registry = ExtensionRegistry()
    seen: list[object] = []
    unsubscribe = None

    def once(_name: str, api: object) -> None:
        seen.append(api)
        registry.register("svc", "newer", owner="p")  # queued behind this call...
        unsubscribe()  # ...and dropped: the subscriber has left

    unsubscribe = registry.subscribe("svc", once)
    registry.register("svc", "first", owner="p")
    assert seen == ["first"]
    assert registry.get("svc") == "newer"
