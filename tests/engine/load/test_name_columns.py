"""The name index of a store opened from columns is built from its title and fields columns
(`store_loading.names_from_columns`): no `Node` made, the same index an eager store builds, and
writes made before the first lookup (a rename, an archive, a new node) are in it."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from memgraph_plugin import Node, Store
from memgraph_plugin.storage.format.graph_columns import state_tables
from tests.story_graph import story_data


def _opened(data: dict[str, Any], *, names_now: bool = False) -> Store:
    nodes, edges = state_tables(Store.from_dict(data).to_dict())
    return Store.from_columns(
        nodes, edges, data["nodeSeq"], data["seqCounter"], names_now=names_now
    )


def _index(store: Store) -> tuple[Any, ...]:
    names = store.name_index()
    return names.ids, names.names, names.shorts, names.skeletons


def test_the_first_lookup_after_an_open_makes_no_node() -> None:
    data = story_data()
    store = _opened(data)
    assert _index(store) == _index(Store.from_dict(data))
    assert dict.__len__(store.internals()[0]) == 0  # built from the columns
    assert store.name_index().known_as("character_sheet", "bramwell") == {"n_2"}
    assert store.name_index().known_as("character_sheet", "艾琳") == {"n_1"}


def test_writes_before_the_first_lookup_are_in_the_index() -> None:
    data = story_data()
    lazy, eager = _opened(data), Store.from_dict(data)
    for store in (lazy, eager):
        with store.transaction():
            bram = store.node("n_2")
            assert bram is not None
            store.put_node(attrs.evolve(bram, title="Bramble", fields={"aliases": ["Smithy"]}))
            store.put_node(attrs.evolve(store.node("n_12"), archived=True))
            nid = store.allocate_id()
            store.put_node(Node(id=nid, type="character_sheet", title="Mira"))
    assert _index(lazy) == _index(eager)
    assert lazy.name_index().known_as("character_sheet", "bram") == frozenset()
    assert lazy.name_index().known_as("character_sheet", "smithy") == {"n_2"}
    assert lazy.name_index().known_as("character_sheet", "old ghost") == frozenset()


def test_an_index_built_after_every_record_was_made_reads_the_records() -> None:
    data = story_data()
    lazy = _opened(data)
    list(lazy.iter_nodes())  # every record made: the node map dropped its columns
    assert lazy.internals()[0].complete
    assert _index(lazy) == _index(Store.from_dict(data))


def test_the_name_index_built_on_its_own_thread_is_the_one_a_lookup_reads() -> None:
    from memgraph_plugin.engine.index.deferred import build_soon

    data = story_data()
    store = _opened(data)
    with store.transaction():  # a write while it builds: re-read by the first lookup
        store.put_node(attrs.evolve(store.node("n_2"), title="Bramble", fields={}))
    build = build_soon(store, "_names")
    assert build is not None
    build.result(60)
    assert "_names" in vars(store) and build_soon(store, "_names") is None
    eager = Store.from_dict(data)
    with eager.transaction():
        eager.put_node(attrs.evolve(eager.node("n_2"), title="Bramble", fields={}))
    assert _index(store) == _index(eager)


def test_a_deferred_build_that_fails_is_tried_again_by_the_next_read() -> None:
    from memgraph_plugin.engine.index.deferred import Deferred, defer

    calls: list[int] = []

    class Holder:
        value = Deferred()

        def __init__(self) -> None:
            self._deferred: dict[str, Any] = {}

    def build() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first build fails")
        return 42

    holder = Holder()
    defer(holder, value=build)
    with pytest.raises(RuntimeError):
        holder.value  # noqa: B018
    assert holder.value == 42 and len(calls) == 2


def test_the_name_index_is_built_beside_the_rest_of_the_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Store.from_columns(names_now=True)` (a chat's open) starts the name index on a build
    thread as soon as the node columns are loaded (`deferred.started`): the open goes on
    (edges, pools) while it is built, and the first lookup waits for that build instead of
    starting another. Without it, the first lookup builds the index."""
    import threading

    import memgraph_plugin.engine.load.store_loading as store_loading

    build = store_loading.names_from_columns
    began, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def slow(*args: Any) -> Any:
        calls.append(threading.current_thread().name)
        began.set()
        assert release.wait(60)
        return build(*args)

    monkeypatch.setattr(store_loading, "names_from_columns", slow)
    data = story_data()
    store = _opened(data, names_now=True)  # returns while the build is held
    assert began.wait(60) and not release.is_set()
    assert len(calls) == 1 and calls[0].startswith("index build")
    release.set()
    assert _index(store) == _index(Store.from_dict(data))
    assert len(calls) == 1  # the lookup took the early build's index

    calls.clear()
    lazy = _opened(data)  # a load that may never look a name up (a keyword rebuild)
    assert calls == []
    assert _index(lazy) == _index(Store.from_dict(data))
    assert calls == [threading.current_thread().name]  # built by its first lookup


def test_an_early_build_that_failed_is_built_again_by_the_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    import memgraph_plugin.engine.load.store_loading as store_loading

    build = store_loading.names_from_columns
    calls: list[int] = []
    failed = threading.Event()

    def flaky(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            failed.set()
            raise MemoryError("the first build fails")
        return build(*args)

    monkeypatch.setattr(store_loading, "names_from_columns", flaky)
    data = story_data()
    store = _opened(data, names_now=True)
    assert failed.wait(60)  # the early build ran, on a build thread, and failed
    assert _index(store) == _index(Store.from_dict(data))
    assert len(calls) == 2


def test_an_early_build_not_started_yet_is_run_by_the_lookup() -> None:
    """A lookup never waits behind queued builds: one that has not started is taken over."""
    import concurrent.futures
    import threading

    from memgraph_plugin.engine.index import deferred

    pool = deferred.build_threads
    busy, release = threading.Barrier(pool._max_workers + 1), threading.Event()
    held = [
        pool.submit(lambda: (busy.wait(60), release.wait(60))) for _ in range(pool._max_workers)
    ]
    try:
        busy.wait(60)  # every build thread is held: the open's build stays queued
        data = story_data()
        store = _opened(data, names_now=True)
        with concurrent.futures.ThreadPoolExecutor(1) as reader:
            lookup = reader.submit(_index, store)
            assert lookup.result(timeout=60) == _index(Store.from_dict(data))
    finally:
        release.set()
        for job in held:
            job.result(60)
