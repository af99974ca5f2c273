"""Build a host's persistence from its settings (used by the plugin's service factory)."""

from __future__ import annotations

import json
from typing import Any

import attrs

from memgraph_plugin.chats.chat_cache import PersistedChats
from memgraph_plugin.embedding.registry import resolve_profile
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.settings import StorageSettings, number_setting
from memgraph_plugin.storage.shards import open_storage

_FROM_SETTINGS = object()


def with_keyword_schema(settings: StorageSettings, schema: Any) -> StorageSettings:
    """`settings` whose snapshots carry the keyword index's token lists, made by `schema` (the
    node-type specs the chats' stores use); without it a snapshot is read back by indexing text."""
    return attrs.evolve(settings, keyword_schema=json.dumps(schema.to_list(), ensure_ascii=False))


def persistence_for_host(
    host: Any, service: Any, *, profile: Any = _FROM_SETTINGS
) -> PersistedChats:
    """`PersistedChats` over the host's database (`storage_uri`, default `<data_dir>/lancedb`).

    The connection is opened on first use, so a bad URI makes `open_session` return None with
    the reason logged instead of breaking host start-up. An unknown `embedding_profile` raises
    here, naming the profiles that exist.
    """
    settings = dict(getattr(host, "settings", None) or {})
    storage_settings = StorageSettings.from_settings(
        settings, data_dir=getattr(host, "data_dir", None)
    )
    if profile is _FROM_SETTINGS:
        profile = resolve_profile(settings.get("embedding_profile"), getattr(host, "pm", None))
    from memgraph_plugin.engine.graph.store import Store

    def storage() -> LanceStorage:
        return open_storage(with_keyword_schema(storage_settings, service.schema))

    chats = PersistedChats(
        storage,
        store_from_dict=lambda data: Store.from_dict(data, schema=service.schema),
        store_from_state=lambda state: Store.from_columns(
            state.nodes,
            state.edges,
            state.node_seq,
            state.seq_counter,
            schema=service.schema,
            keywords=state.keywords,
            names_now=True,  # an open: its first message looks names up
        ),
        schema=lambda: service.schema,
        profile=profile,
        ann_threshold=int(number_setting(settings, "vector_ann_threshold", 250_000, 1)),
        # with chat leases the lease says when another host wrote a chat (its cache dropped)
        refresh_interval=float("inf")
        if storage_settings.single_writer
        else number_setting(settings, "storage_refresh_seconds", 0.0, 0),
        memory_budget_mb=number_setting(settings, "memory_budget_mb", 1024.0, 0.001),
    )
    chats.pending_dir = getattr(host, "data_dir", None)  # background work, for `status`
    return chats
