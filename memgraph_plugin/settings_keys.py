"""The memory graph's setting keys (``memgraph-host.toml``), declared in the host's schema.

Imported by the plugin module, so the keys are known whenever the plugin loads. Each room of keys
is one frozen attrs class; the code reads a key through its field (``RECALL.recall_top_k`` with
``host.settings.setting_values.int_setting``, or ``settings.get(HTTP.serve_token.name)``), so its
key, default and bounds are written once, here. The LLM keys are declared here, not in
``llm/settings.py``: the LLM package is imported only when llm_base_url is set, and the keys must
be known before that.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from host.settings.settings_schema import Table, setting, settings_room
from memgraph_plugin.engine.model.values import (
    DEFAULT_MAX_FIELD_BYTES,
    DEFAULT_MAX_FIELD_NAME_CHARS,
    DEFAULT_MAX_NODE_BYTES,
    DEFAULT_MAX_TITLE_CHARS,
)


@settings_room
class GraphKeys:
    """The graph's schema and embedding."""

    embedding_profile: str = setting(
        "wordllama",
        """Name of the embedding profile for vector search: ``wordllama`` (the default: semantic
        256-d vectors from weights inside its wheel, never downloaded), ``hashing`` (word and
        character n-gram hashing, no model), ``none`` (no vectors; recall is keyword + recency),
        or one a plugin registers through ``memgraph_embedding_profiles``. Chats stored under
        another profile are re-embedded on their first vector search; ``memgraph-host reindex``
        moves them ahead of time (docs/search.md).""",
    )
    schema: Any | None = setting(
        None,
        """Node-type schema: a path to a JSON file or a list of type specs (the contract's
        shape). Unset: the built-in default schema.""",
    )


@settings_room
class StorageKeys:
    """How the database is kept (read by `memgraph_plugin.storage.settings`)."""

    storage_options: Table = setting(
        {},
        """Options handed to LanceDB for object stores (e.g. ``aws_endpoint``, ``aws_region``,
        ``allow_http``), a table of strings.""",
    )
    storage_retention_seconds: float = setting(
        600.0,
        "Table versions older than this are deleted when the tables are compacted.",
        minimum=0,
    )
    storage_optimize_every: int = setting(
        50,
        """After this many commits by this process, the next background maintenance pass compacts
        and cleans up the tables that need it (8 small fragments, or 16 versions since their last
        compaction; up to 8x that for tables past 64 MB); a table that needs none is not
        rewritten.""",
        minimum=1,
    )
    storage_checkpoint_every: int = setting(
        200,
        "A chat is snapshotted (in the background) once this many journal rows follow its last "
        "snapshot.",
        minimum=1,
    )
    storage_maintenance_seconds: float = setting(
        30.0,
        """The background maintenance (snapshots, compaction, cleanup) runs a pass at least this
        often while anything was committed.""",
        minimum=0.05,
    )
    storage_snapshot_chain: int = setting(
        8,
        "Snapshots in a chain (one full, then deltas of what changed) before the next full one.",
        minimum=1,
    )
    storage_keep_checkpoints: int = setting(
        3, "Snapshots kept per chat (older ones are deleted).", minimum=1
    )
    storage_history_seconds: float | None = setting(
        None,
        """Journal rows older than this and older than the oldest kept snapshot are deleted.
        Unset: the whole history is kept.""",
        minimum=0,
    )
    storage_refresh_seconds: float = setting(
        0.0,
        """How long an open chat trusts its cached graph before checking the database for commits
        by other processes (0: check on every open).""",
        minimum=0,
    )
    memory_budget_mb: float = setting(
        1024.0,
        """Loaded chats beyond this estimated size (MB) are unloaded, least recently used first;
        an unloaded chat reopens from storage on its next use (docs/storage.md, "Memory
        budget").""",
        minimum=0.001,
    )
    vector_ann_threshold: int = setting(
        250_000,
        "Vector search builds an approximate (ANN) index once a table holds this many vectors.",
        minimum=1,
    )


@settings_room
class RecallKeys:
    """Recall (read by recall/, turn/ and llm/)."""

    recall_top_k: int = setting(32, "Most items one recall selects (before the budget).", minimum=0)
    recall_candidates: int = setting(
        80, "How many candidates each ranking signal (keyword, vector) is asked for.", minimum=1
    )
    recall_seed_count: int = setting(
        3, "Best baseline nodes graph expansion starts from.", minimum=0
    )
    recall_hops: int = setting(1, "How many edges graph expansion follows from a seed.", minimum=1)
    recall_max_expanded: int = setting(
        8, "Most nodes graph expansion adds to one recall.", minimum=0
    )
    recall_recent_window: int = setting(
        1,
        "Nodes written in the last this-many turns are left out of recall (the chat still has "
        "them).",
        minimum=0,
    )
    recall_vector_min_score: float = setting(
        0.2, "Vector similarity below this does not count as a match."
    )
    recall_context_weight: float = setting(
        0.8, "Share of a neighbour's keyword score a node gets as context.", minimum=0
    )
    recall_budget_chars: int = setting(
        6000, "Characters the injected memory block may take at most.", minimum=1
    )
    recall_pinned_per_type: int = setting(
        3, "Pinned (always-inject) nodes shown per type at most.", minimum=0
    )
    recall_item_chars: int = setting(
        400, "Characters one injected item may take at most.", minimum=8
    )
    # the modes of recall.rollout.RolloutMode, in this order
    recall_rollout: Literal["off", "shadow", "canary"] = setting(
        "canary",
        """Graph-expansion rollout: ``off`` never expands, ``shadow`` expands for the trace only,
        ``canary`` applies it (guarded by the quality gate).""",
    )
    recall_graph_expansion: bool = setting(
        True, "Feature flag: false turns graph expansion off whatever the rollout mode."
    )
    recall_quality_window: int = setting(
        20, "Recent graph-expansion outcomes the canary quality gate looks at.", minimum=1
    )
    recall_quality_max_error_rate: float = setting(
        0.5,
        "Share of failed expansions in the window above which the gate holds canary back.",
        minimum=0,
        maximum=1,
    )
    recall_compaction: Literal["auto", "off"] = setting(
        "auto",
        "``auto``: compact eligible groups after each turn; ``off``: never compact automatically.",
    )


@settings_room
class LlmKeys:
    """The LLM server (read by `memgraph_plugin.llm.settings`)."""

    llm_base_url: str | None = setting(
        None,
        """URL of an OpenAI-compatible chat-completions server, up to /v1 (e.g.
        http://localhost:11434/v1 for Ollama). Unset: no LLM, the offline defaults answer.""",
    )
    llm_model: str | None = setting(
        None, "Model name the server knows (required with llm_base_url)."
    )
    llm_api_key_env: str | None = setting(
        None,
        """NAME of the environment variable holding the API key (the key itself never goes in the
        settings file). Unset: a placeholder key, fine for local servers.""",
    )
    llm_timeout_s: float = setting(
        60.0, "Seconds one request may take before it counts as timed out.", minimum=0.001
    )
    llm_retries: int = setting(
        2, "Extra attempts after a 429, a 5xx, a timeout or a refused connection.", minimum=0
    )
    llm_down_after: int = setting(
        3,
        "Consecutive calls that cannot reach the LLM server (refused, timed out) after which it "
        "is not called for llm_cooloff_s seconds (the offline defaults answer meanwhile).",
        minimum=1,
    )
    llm_cooloff_s: float = setting(
        60.0,
        "Seconds the LLM server is not called after llm_down_after failures in a row or a "
        "model-not-found answer.",
        minimum=0,
    )
    llm_backoff_s: float = setting(
        1.0, "First wait between attempts; doubles each retry.", minimum=0
    )
    llm_backoff_max_s: float = setting(
        30.0, "Longest wait between attempts (a Retry-After is capped at it).", minimum=0
    )
    llm_hooks: Any = setting(
        ("extract", "route", "summarise"),
        """Which hooks go through the model: a list (or comma-separated text) of extract, route,
        summarise.""",
    )
    llm_response_format: Literal["json_schema", "json_object"] = setting(
        "json_schema",
        """json_schema (structured output) or json_object; json_schema falls back to json_object
        by itself when the server rejects it.""",
    )
    llm_rerank_count: int = setting(
        20, "How many fused candidates the LLM router reranks at most.", minimum=1
    )
    llm_temperature: float = setting(
        0.0, "Sampling temperature sent with every request.", minimum=0
    )
    llm_max_tokens: int = setting(2048, "Most tokens one answer may have.", minimum=1)


@settings_room
class WriteLimitKeys:
    """Size limits of writes (read by `memgraph_plugin.engine.model.values.Limits`)."""

    max_title_chars: int = setting(
        DEFAULT_MAX_TITLE_CHARS,
        "The longest node title a write may store, in characters (longer: BAD_OP / BAD_ARGS).",
        minimum=1,
    )
    max_field_bytes: int = setting(
        DEFAULT_MAX_FIELD_BYTES,
        "The largest field value a write may store, as UTF-8 JSON bytes.",
        minimum=1,
    )
    max_field_name_chars: int = setting(
        DEFAULT_MAX_FIELD_NAME_CHARS,
        "The longest field name a write or an import may store, in characters.",
        minimum=1,
    )
    max_node_bytes: int = setting(
        DEFAULT_MAX_NODE_BYTES,
        "The largest node a write or an import may store: its title and every field name and "
        "value as UTF-8 JSON bytes.",
        minimum=1,
    )


@settings_room
class HttpKeys:
    """The HTTP server of `serve` and `proxy` (read by `memgraph_plugin.web.settings`)."""

    serve_token: str | None = setting(
        None,
        "The token `memgraph-host serve` and `memgraph-host proxy` require (X-Memgraph-Token "
        "header) for every write route: the explorer's edits and the JSON API's messages and "
        "forget; unset: a random one is printed at start. `serve --host` off loopback needs it "
        "set.",
    )
    http_max_body_bytes: int = setting(
        8 * 1024 * 1024,
        "Largest request body `serve` and `proxy` take (bytes); a larger one is refused with 413 "
        "before any of it is decoded.",
        minimum=1,
    )
    http_cors_origins: Any | None = setting(
        None,
        "Other web origins (scheme://host[:port]) whose pages may call /api/* and /v1/* from a "
        "browser: a list, or one comma-separated string. Unset: none (cross-site calls are "
        "refused).",
    )


#: Each room's fields, as the code reads them: ``RECALL.recall_top_k.name`` / ``.default``.
GRAPH = attrs.fields(GraphKeys)
STORAGE = attrs.fields(StorageKeys)
RECALL = attrs.fields(RecallKeys)
LLM = attrs.fields(LlmKeys)
WRITE_LIMITS = attrs.fields(WriteLimitKeys)
HTTP = attrs.fields(HttpKeys)
