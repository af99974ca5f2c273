"""Recall: the built-in hybrid router, rollout modes, rendering and traces.

The names load on first use (PEP 562): the recall commands (``trace``, ``status``) are listed by
``memgraph-host --help`` without loading the router and the engine behind it.
"""

from __future__ import annotations

from host.lazy_exports import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    name: f"memgraph_plugin.{module}"
    for module, names in {
        "hook_contract": ("Inclusion", "RouteRequest", "RouteResult"),
        "recall.block.render": ("render_injection", "render_table"),
        "recall.rollout": (
            "FallbackReason", "QualityGate", "RolloutDecision", "RolloutMode", "decide"
        ),
        "recall.hybrid_router": ("HybridRouter",),
        "recall.trace": ("RecallTrace", "TraceLog"),
    }.items()
    for name in names
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
