"""The recall pipeline's setting keys, declared from the constants the recall code reads (so a
default changed there is the default documented in docs/settings.md after `make settings-doc`).

Imported by the plugin module, so the keys are known whenever the plugin loads.
"""

from __future__ import annotations

from host.settings.settings_schema import Kind, declare

from .injection_budget import (
    BUDGET_SETTING,
    DEFAULT_BUDGET,
    DEFAULT_ITEM,
    DEFAULT_PINNED,
    ITEM_SETTING,
    PINNED_SETTING,
)
from .rollout import (
    DEFAULT_GATE_RATE,
    DEFAULT_GATE_WINDOW,
    DEFAULT_MODE,
    FEATURE_FLAG_SETTING,
    GATE_RATE_SETTING,
    GATE_WINDOW_SETTING,
    ROLLOUT_SETTING,
    RolloutMode,
)
from .router import (
    CANDIDATES_SETTING,
    CONTEXT_SETTING,
    DEFAULT_CANDIDATES,
    DEFAULT_CONTEXT,
    DEFAULT_HOPS,
    DEFAULT_MAX_EXPANDED,
    DEFAULT_RECENT,
    DEFAULT_SEEDS,
    DEFAULT_TOP_K,
    DEFAULT_VECTOR_MIN,
    HOPS_SETTING,
    MAX_EXPANDED_SETTING,
    RECENT_SETTING,
    SEEDS_SETTING,
    TOP_K_SETTING,
    VECTOR_MIN_SETTING,
)

#: read by the turn pipeline's own compaction (`turn/auto_compaction.py`)
COMPACTION_SETTING = "recall_compaction"

declare(
    TOP_K_SETTING,
    Kind.INTEGER,
    DEFAULT_TOP_K,
    "Most items one recall selects (before the budget).",
    minimum=0,
)
declare(
    CANDIDATES_SETTING,
    Kind.INTEGER,
    DEFAULT_CANDIDATES,
    "How many candidates each ranking signal (keyword, vector) is asked for.",
    minimum=1,
)
declare(
    SEEDS_SETTING,
    Kind.INTEGER,
    DEFAULT_SEEDS,
    "Best baseline nodes graph expansion starts from.",
    minimum=0,
)
declare(
    HOPS_SETTING,
    Kind.INTEGER,
    DEFAULT_HOPS,
    "How many edges graph expansion follows from a seed.",
    minimum=1,
)
declare(
    MAX_EXPANDED_SETTING,
    Kind.INTEGER,
    DEFAULT_MAX_EXPANDED,
    "Most nodes graph expansion adds to one recall.",
    minimum=0,
)
declare(
    RECENT_SETTING,
    Kind.INTEGER,
    DEFAULT_RECENT,
    "Nodes written in the last this-many turns are left out of recall (the chat still has them).",
    minimum=0,
)
declare(
    VECTOR_MIN_SETTING,
    Kind.NUMBER,
    DEFAULT_VECTOR_MIN,
    "Vector similarity below this does not count as a match.",
)
declare(
    CONTEXT_SETTING,
    Kind.NUMBER,
    DEFAULT_CONTEXT,
    "Share of a neighbour's keyword score a node gets as context.",
    minimum=0,
)
declare(
    BUDGET_SETTING,
    Kind.INTEGER,
    DEFAULT_BUDGET,
    "Characters the injected memory block may take at most.",
    minimum=1,
)
declare(
    PINNED_SETTING,
    Kind.INTEGER,
    DEFAULT_PINNED,
    "Pinned (always-inject) nodes shown per type at most.",
    minimum=0,
)
declare(
    ITEM_SETTING,
    Kind.INTEGER,
    DEFAULT_ITEM,
    "Characters one injected item may take at most.",
    minimum=8,
)
declare(
    ROLLOUT_SETTING,
    Kind.CHOICE,
    DEFAULT_MODE,
    """Graph-expansion rollout: ``off`` never expands, ``shadow`` expands for the trace only,
    ``canary`` applies it (guarded by the quality gate).""",
    choices=tuple(m.value for m in RolloutMode),
)
declare(
    FEATURE_FLAG_SETTING,
    Kind.BOOLEAN,
    True,
    "Feature flag: false turns graph expansion off whatever the rollout mode.",
)
declare(
    GATE_WINDOW_SETTING,
    Kind.INTEGER,
    DEFAULT_GATE_WINDOW,
    "Recent graph-expansion outcomes the canary quality gate looks at.",
    minimum=1,
)
declare(
    GATE_RATE_SETTING,
    Kind.NUMBER,
    DEFAULT_GATE_RATE,
    "Share of failed expansions in the window above which the gate holds canary back.",
    minimum=0,
    maximum=1,
)
declare(
    COMPACTION_SETTING,
    Kind.CHOICE,
    "auto",
    "``auto``: compact eligible groups after each turn; ``off``: never compact automatically.",
    choices=("auto", "off"),
)
