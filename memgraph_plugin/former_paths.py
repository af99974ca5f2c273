"""The memory graph's former module paths, still importable after the layout of issue 25 moved
them into rooms (`host.module_aliases`). New code imports the new paths."""

from __future__ import annotations

FORMER_PATHS: dict[str, str] = {
    "memgraph_plugin.external_api": "memgraph_plugin.api.external",  # named in ../shared/API.md
    "memgraph_plugin.engine.models": "memgraph_plugin.engine.model.models",
    "memgraph_plugin.engine.frozen": "memgraph_plugin.engine.model.frozen",
    "memgraph_plugin.engine.values": "memgraph_plugin.engine.model.values",
    "memgraph_plugin.engine.schema": "memgraph_plugin.engine.model.schema",
    "memgraph_plugin.engine.converter": "memgraph_plugin.engine.model.converter",
    "memgraph_plugin.engine.views": "memgraph_plugin.engine.model.views",
    "memgraph_plugin.engine.results": "memgraph_plugin.engine.model.results",
    "memgraph_plugin.engine.edge_records": "memgraph_plugin.engine.model.edge_records",
    "memgraph_plugin.engine.json_codec": "memgraph_plugin.engine.model.json_records",
    "memgraph_plugin.engine.store": "memgraph_plugin.engine.graph.store",
    "memgraph_plugin.engine.store_transactions": "memgraph_plugin.engine.graph.store_transactions",
    "memgraph_plugin.engine.store_revert": "memgraph_plugin.engine.graph.store_revert",
    "memgraph_plugin.engine.name_index": "memgraph_plugin.engine.index.name_index",
    "memgraph_plugin.engine.candidate_pool": "memgraph_plugin.engine.index.candidate_pool",
    "memgraph_plugin.engine.deferred": "memgraph_plugin.engine.index.deferred",
    "memgraph_plugin.engine.projection": "memgraph_plugin.engine.read.projection",
    "memgraph_plugin.engine.edge_summaries": "memgraph_plugin.engine.read.edge_summaries",
    "memgraph_plugin.engine.keyword_index": "memgraph_plugin.engine.keyword.keyword_index",
    "memgraph_plugin.engine.keyword_postings": "memgraph_plugin.engine.keyword.keyword_postings",
    "memgraph_plugin.engine.keyword_text": "memgraph_plugin.engine.keyword.keyword_text",
    "memgraph_plugin.engine.keyword_columns": "memgraph_plugin.engine.keyword.keyword_columns",
    "memgraph_plugin.engine.store_loading": "memgraph_plugin.engine.load.store_loading",
    "memgraph_plugin.engine.columnar": "memgraph_plugin.engine.load.column_loader",
    "memgraph_plugin.engine.lazy_nodes": "memgraph_plugin.engine.load.lazy_nodes",
    "memgraph_plugin.engine.edge_columns": "memgraph_plugin.engine.load.edge_columns",
    "memgraph_plugin.engine.loaded_order": "memgraph_plugin.engine.load.loaded_order",
    "memgraph_plugin.engine.gc_pause": "memgraph_plugin.engine.load.gc_pause",
    "memgraph_plugin.engine.store_file": "memgraph_plugin.engine.load.store_file",
    "memgraph_plugin.engine.ops": "memgraph_plugin.engine.write.ops",
    "memgraph_plugin.engine.batch": "memgraph_plugin.engine.write.batch",
    "memgraph_plugin.engine.rollups": "memgraph_plugin.engine.write.rollups",
    "memgraph_plugin.storage.journal_compaction": (
        "memgraph_plugin.storage.journal.journal_compaction"
    ),
    "memgraph_plugin.storage.table_head": "memgraph_plugin.storage.journal.table_head",
    "memgraph_plugin.storage.codec": "memgraph_plugin.storage.journal.change_codec",
    "memgraph_plugin.storage.checkpoints": "memgraph_plugin.storage.maintenance.checkpoints",
    "memgraph_plugin.storage.columns": "memgraph_plugin.storage.format.graph_columns",
    "memgraph_plugin.storage.keyword_rows": "memgraph_plugin.storage.format.keyword_rows",
    "memgraph_plugin.storage.shapes": "memgraph_plugin.storage.format.json_shapes",
    "memgraph_plugin.storage.vector_ann": "memgraph_plugin.storage.vectors.vector_ann",
    "memgraph_plugin.storage.vector_lists": "memgraph_plugin.storage.snapshots.vector_lists",
    "memgraph_plugin.storage.maintenance_process": (
        "memgraph_plugin.storage.maintenance.maintenance_process"
    ),
    "memgraph_plugin.storage.table_compaction": (
        "memgraph_plugin.storage.maintenance.table_compaction"
    ),
    "memgraph_plugin.storage.chat_cache": "memgraph_plugin.chats.chat_cache",
    "memgraph_plugin.storage.loaded_chat": "memgraph_plugin.chats.loaded_chat",
    "memgraph_plugin.storage.chat_vectors": "memgraph_plugin.chats.chat_vectors",
    "memgraph_plugin.storage.memory_budget": "memgraph_plugin.chats.memory_budget",
    "memgraph_plugin.storage.recent_commits": "memgraph_plugin.chats.recent_commits",
    "memgraph_plugin.storage.factory": "memgraph_plugin.chats.factory",
    "memgraph_plugin.storage.chat_lookup": "memgraph_plugin.chats.chat_lookup",
    "memgraph_plugin.recall.routes": "memgraph_plugin.hook_contract",
    "memgraph_plugin.recall.pipeline": "memgraph_plugin.turn.pipeline",
    "memgraph_plugin.recall.extraction": "memgraph_plugin.turn.message_extraction",
    "memgraph_plugin.recall.compaction": "memgraph_plugin.turn.auto_compaction",
    "memgraph_plugin.recall.story": "memgraph_plugin.turn.story",
}
