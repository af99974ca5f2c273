"""The memory graph's setting keys (``memgraph-host.toml``), declared in the host's schema.

Imported by the plugin module, so the keys are known whenever the plugin loads. Each key is one
`Setting` object, and the code reads that object (``host.settings.setting_values``:
`int_setting(settings, RECALL_TOP_K)`, or ``settings.get(KEY.key, KEY.default)``), so its key,
default and bounds are written once, here. A subsystem may instead declare its keys beside its
own code with `host.settings.settings_schema.declare`, as long as that module is imported when
the plugin loads (import it here otherwise).
"""

from __future__ import annotations

from host.settings.settings_schema import Kind, declare
from memgraph_plugin.engine.model.values import (
    DEFAULT_MAX_FIELD_BYTES,
    DEFAULT_MAX_FIELD_NAME_CHARS,
    DEFAULT_MAX_NODE_BYTES,
    DEFAULT_MAX_TITLE_CHARS,
)

# ---------------------------------------------------------------- graph and embedding
EMBEDDING_PROFILE = declare(
    "embedding_profile",
    Kind.STRING,
    "wordllama",
    """Name of the embedding profile for vector search: ``wordllama`` (the default: semantic
    256-d vectors from weights inside its wheel, never downloaded), ``hashing`` (word and
    character n-gram hashing, no model), ``none`` (no vectors; recall is keyword + recency), or
    one a plugin registers through ``memgraph_embedding_profiles``. Chats stored under another
    profile are re-embedded on their first vector search; ``memgraph-host reindex`` moves them
    ahead of time (docs/search.md).""",
)
SCHEMA = declare(
    "schema",
    Kind.ANY,
    None,
    """Node-type schema: a path to a JSON file or a list of type specs (the contract's shape).
    Unset: the built-in default schema.""",
)

# ---------------------------------------------------------------- storage
STORAGE_OPTIONS = declare(
    "storage_options",
    Kind.TABLE,
    {},
    """Options handed to LanceDB for object stores (e.g. ``aws_endpoint``, ``aws_region``,
    ``allow_http``), a table of strings.""",
)
STORAGE_RETENTION_SECONDS = declare(
    "storage_retention_seconds",
    Kind.NUMBER,
    600.0,
    "Table versions older than this are deleted when the tables are compacted.",
    minimum=0,
)
STORAGE_OPTIMIZE_EVERY = declare(
    "storage_optimize_every",
    Kind.INTEGER,
    50,
    """After this many commits by this process, the next background maintenance pass compacts
    and cleans up the tables that need it (8 small fragments, or 16 versions since their last
    compaction; up to 8x that for tables past 64 MB); a table that needs none is not rewritten.""",
    minimum=1,
)
STORAGE_CHECKPOINT_EVERY = declare(
    "storage_checkpoint_every",
    Kind.INTEGER,
    200,
    """A chat is snapshotted (in the background) once this many journal rows follow its last
    snapshot.""",
    minimum=1,
)
STORAGE_MAINTENANCE_SECONDS = declare(
    "storage_maintenance_seconds",
    Kind.NUMBER,
    30.0,
    """The background maintenance (snapshots, compaction, cleanup) runs a pass at least this
    often while anything was committed.""",
    minimum=0.05,
)
STORAGE_SNAPSHOT_CHAIN = declare(
    "storage_snapshot_chain",
    Kind.INTEGER,
    8,
    """Snapshots in a chain (one full, then deltas of what changed) before the next full one.""",
    minimum=1,
)
STORAGE_KEEP_CHECKPOINTS = declare(
    "storage_keep_checkpoints",
    Kind.INTEGER,
    3,
    "Snapshots kept per chat (older ones are deleted).",
    minimum=1,
)
STORAGE_HISTORY_SECONDS = declare(
    "storage_history_seconds",
    Kind.NUMBER,
    None,
    """Journal rows older than this and older than the oldest kept snapshot are deleted.
    Unset: the whole history is kept.""",
    minimum=0,
)
STORAGE_REFRESH_SECONDS = declare(
    "storage_refresh_seconds",
    Kind.NUMBER,
    0.0,
    """How long an open chat trusts its cached graph before checking the database for commits
    by other processes (0: check on every open).""",
    minimum=0,
)
MEMORY_BUDGET_MB = declare(
    "memory_budget_mb",
    Kind.NUMBER,
    1024.0,
    """Loaded chats beyond this estimated size (MB) are unloaded, least recently used first;
    an unloaded chat reopens from storage on its next use (docs/storage.md, "Memory budget").""",
    minimum=0.001,
)
VECTOR_ANN_THRESHOLD = declare(
    "vector_ann_threshold",
    Kind.INTEGER,
    250_000,
    "Vector search builds an approximate (ANN) index once a table holds this many vectors.",
    minimum=1,
)

# ---------------------------------------------------------------- recall (recall/, turn/, llm/)
# The code reads these objects (`host.settings.setting_values.int_setting(settings, RECALL_HOPS)`),
# never a copy of their key or default.
RECALL_TOP_K = declare(
    "recall_top_k",
    Kind.INTEGER,
    32,
    "Most items one recall selects (before the budget).",
    minimum=0,
)
RECALL_CANDIDATES = declare(
    "recall_candidates",
    Kind.INTEGER,
    80,
    "How many candidates each ranking signal (keyword, vector) is asked for.",
    minimum=1,
)
RECALL_SEED_COUNT = declare(
    "recall_seed_count",
    Kind.INTEGER,
    3,
    "Best baseline nodes graph expansion starts from.",
    minimum=0,
)
RECALL_HOPS = declare(
    "recall_hops",
    Kind.INTEGER,
    1,
    "How many edges graph expansion follows from a seed.",
    minimum=1,
)
RECALL_MAX_EXPANDED = declare(
    "recall_max_expanded",
    Kind.INTEGER,
    8,
    "Most nodes graph expansion adds to one recall.",
    minimum=0,
)
RECALL_RECENT_WINDOW = declare(
    "recall_recent_window",
    Kind.INTEGER,
    1,
    "Nodes written in the last this-many turns are left out of recall (the chat still has them).",
    minimum=0,
)
RECALL_VECTOR_MIN_SCORE = declare(
    "recall_vector_min_score",
    Kind.NUMBER,
    0.2,
    "Vector similarity below this does not count as a match.",
)
RECALL_CONTEXT_WEIGHT = declare(
    "recall_context_weight",
    Kind.NUMBER,
    0.8,
    "Share of a neighbour's keyword score a node gets as context.",
    minimum=0,
)
RECALL_BUDGET_CHARS = declare(
    "recall_budget_chars",
    Kind.INTEGER,
    6000,
    "Characters the injected memory block may take at most.",
    minimum=1,
)
RECALL_PINNED_PER_TYPE = declare(
    "recall_pinned_per_type",
    Kind.INTEGER,
    3,
    "Pinned (always-inject) nodes shown per type at most.",
    minimum=0,
)
RECALL_ITEM_CHARS = declare(
    "recall_item_chars",
    Kind.INTEGER,
    400,
    "Characters one injected item may take at most.",
    minimum=8,
)
RECALL_ROLLOUT = declare(
    "recall_rollout",
    Kind.CHOICE,
    "canary",
    """Graph-expansion rollout: ``off`` never expands, ``shadow`` expands for the trace only,
    ``canary`` applies it (guarded by the quality gate).""",
    choices=("off", "shadow", "canary"),  # recall.rollout.RolloutMode, in this order
)
RECALL_GRAPH_EXPANSION = declare(
    "recall_graph_expansion",
    Kind.BOOLEAN,
    True,
    "Feature flag: false turns graph expansion off whatever the rollout mode.",
)
RECALL_QUALITY_WINDOW = declare(
    "recall_quality_window",
    Kind.INTEGER,
    20,
    "Recent graph-expansion outcomes the canary quality gate looks at.",
    minimum=1,
)
RECALL_QUALITY_MAX_ERROR_RATE = declare(
    "recall_quality_max_error_rate",
    Kind.NUMBER,
    0.5,
    "Share of failed expansions in the window above which the gate holds canary back.",
    minimum=0,
    maximum=1,
)
RECALL_COMPACTION = declare(
    "recall_compaction",
    Kind.CHOICE,
    "auto",
    "``auto``: compact eligible groups after each turn; ``off``: never compact automatically.",
    choices=("auto", "off"),
)

# ---------------------------------------------------------------- LLM (memgraph_plugin/llm/)
# Declared here, not in llm/settings.py: the LLM package is imported only when llm_base_url is
# set, and the keys must be known before that. llm/settings.py reads these objects.
LLM_BASE_URL = declare(
    "llm_base_url",
    Kind.STRING,
    None,
    """URL of an OpenAI-compatible chat-completions server, up to /v1 (e.g.
    http://localhost:11434/v1 for Ollama). Unset: no LLM, the offline defaults answer.""",
)
LLM_MODEL = declare(
    "llm_model", Kind.STRING, None, "Model name the server knows (required with llm_base_url)."
)
LLM_API_KEY_ENV = declare(
    "llm_api_key_env",
    Kind.STRING,
    None,
    """NAME of the environment variable holding the API key (the key itself never goes in the
    settings file). Unset: a placeholder key, fine for local servers.""",
)
LLM_TIMEOUT_S = declare(
    "llm_timeout_s",
    Kind.NUMBER,
    60.0,
    "Seconds one request may take before it counts as timed out.",
    minimum=0.001,
)
LLM_RETRIES = declare(
    "llm_retries",
    Kind.INTEGER,
    2,
    "Extra attempts after a 429, a 5xx, a timeout or a refused connection.",
    minimum=0,
)
LLM_DOWN_AFTER = declare(
    "llm_down_after",
    Kind.INTEGER,
    3,
    "Consecutive calls that cannot reach the LLM server (refused, timed out) after which it is "
    "not called for llm_cooloff_s seconds (the offline defaults answer meanwhile).",
    minimum=1,
)
LLM_COOLOFF_S = declare(
    "llm_cooloff_s",
    Kind.NUMBER,
    60.0,
    "Seconds the LLM server is not called after llm_down_after failures in a row or a "
    "model-not-found answer.",
    minimum=0,
)
LLM_BACKOFF_S = declare(
    "llm_backoff_s", Kind.NUMBER, 1.0, "First wait between attempts; doubles each retry.", minimum=0
)
LLM_BACKOFF_MAX_S = declare(
    "llm_backoff_max_s",
    Kind.NUMBER,
    30.0,
    "Longest wait between attempts (a Retry-After is capped at it).",
    minimum=0,
)
LLM_HOOKS = declare(
    "llm_hooks",
    Kind.ANY,
    ["extract", "route", "summarise"],
    """Which hooks go through the model: a list (or comma-separated text) of extract, route,
    summarise.""",
)
LLM_RESPONSE_FORMAT = declare(
    "llm_response_format",
    Kind.CHOICE,
    "json_schema",
    """json_schema (structured output) or json_object; json_schema falls back to json_object by
    itself when the server rejects it.""",
    choices=("json_schema", "json_object"),
)
LLM_RERANK_COUNT = declare(
    "llm_rerank_count",
    Kind.INTEGER,
    20,
    "How many fused candidates the LLM router reranks at most.",
    minimum=1,
)
LLM_TEMPERATURE = declare(
    "llm_temperature", Kind.NUMBER, 0.0, "Sampling temperature sent with every request.", minimum=0
)
LLM_MAX_TOKENS = declare(
    "llm_max_tokens", Kind.INTEGER, 2048, "Most tokens one answer may have.", minimum=1
)

# ---------------------------------------------------------------- write limits (values.py)
MAX_TITLE_CHARS = declare(
    "max_title_chars",
    Kind.INTEGER,
    DEFAULT_MAX_TITLE_CHARS,
    "The longest node title a write may store, in characters (longer: BAD_OP / BAD_ARGS).",
    minimum=1,
)
MAX_FIELD_BYTES = declare(
    "max_field_bytes",
    Kind.INTEGER,
    DEFAULT_MAX_FIELD_BYTES,
    "The largest field value a write may store, as UTF-8 JSON bytes.",
    minimum=1,
)
MAX_FIELD_NAME_CHARS = declare(
    "max_field_name_chars",
    Kind.INTEGER,
    DEFAULT_MAX_FIELD_NAME_CHARS,
    "The longest field name a write or an import may store, in characters.",
    minimum=1,
)
MAX_NODE_BYTES = declare(
    "max_node_bytes",
    Kind.INTEGER,
    DEFAULT_MAX_NODE_BYTES,
    "The largest node a write or an import may store: its title and every field name and value "
    "as UTF-8 JSON bytes.",
    minimum=1,
)

# ---------------------------------------------------------------- the HTTP server
SERVE_TOKEN = declare(
    "serve_token",
    Kind.STRING,
    None,
    "The token `memgraph-host serve` and `memgraph-host proxy` require (X-Memgraph-Token "
    "header) for every write route: the explorer's edits and the JSON API's messages and "
    "forget; unset: a random one is printed at start. `serve --host` off loopback needs it set.",
)
HTTP_MAX_BODY_BYTES = declare(
    "http_max_body_bytes",
    Kind.INTEGER,
    8 * 1024 * 1024,
    "Largest request body `serve` and `proxy` take (bytes); a larger one is refused with 413 "
    "before any of it is decoded.",
    minimum=1,
)
HTTP_CORS_ORIGINS = declare(
    "http_cors_origins",
    Kind.ANY,
    None,
    "Other web origins (scheme://host[:port]) whose pages may call /api/* and /v1/* from a "
    "browser: a list, or one comma-separated string. Unset: none (cross-site calls are refused).",
)
