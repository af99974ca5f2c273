"""The one write pipeline: ops, the batch that applies them, rollups."""
