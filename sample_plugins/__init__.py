"""sample_plugins: scout, curator and compactor, companion plugins that use the memory graph only
through the host's registry (``host.get_extension_api("memory-graph")``).

See docs/sample-plugins.md.
"""

from sample_plugins.compactor import CompactionReport, Compactor, Rollup, extractive_summary
from sample_plugins.curator import CurationReport, Curator, Merge, same_entity
from sample_plugins.scout import OrchestratorTools, Scout, ScoutPick, ScoutReport, ToolError

__all__ = [
    "CompactionReport",
    "Compactor",
    "CurationReport",
    "Curator",
    "Merge",
    "OrchestratorTools",
    "Rollup",
    "Scout",
    "ScoutPick",
    "ScoutReport",
    "ToolError",
    "extractive_summary",
    "same_entity",
]
