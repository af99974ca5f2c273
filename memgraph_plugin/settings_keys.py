"""The memory graph's setting keys (``memgraph-host.toml``), declared in the host's schema.

Imported by the plugin module, so the keys are known whenever the plugin loads. A subsystem may
instead declare its keys beside its own code with `host.settings_schema.declare`, as long as that
module is imported when the plugin loads (import it here otherwise). The code reading a key keeps
its default equal to the declared one (``tests/test_settings_schema.py`` checks the built-ins).
"""

from __future__ import annotations

from host.settings_schema import Kind, declare

from .engine.values import (
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
    """Node-type schema: a path to a JSON file or a list of type specs (the original's shape).
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
VECTOR_COARSE_THRESHOLD = declare(
    "vector_coarse_threshold",
    Kind.INTEGER,
    32_768,
    """From this many vectors a chat's in-memory index gets coarse lists (stored with each
    snapshot, so an open has them at once; else built in the background): a vector search then
    scores a bounded number of rows instead of all of them (docs/search.md).""",
    minimum=1,
)

# recall_* keys: memgraph_plugin/recall/setting_keys.py (beside the code, from its constants)

# ---------------------------------------------------------------- LLM (memgraph_plugin/llm/)
# Declared here, not in llm/settings.py: the LLM package is imported only when llm_base_url is
# set, and the keys must be known before that. tests/test_settings_schema.py checks that these
# match llm.settings.SETTINGS (the defaults and meanings the LLM code reads).
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
