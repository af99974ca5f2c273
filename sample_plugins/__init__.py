"""sample_plugins."""
