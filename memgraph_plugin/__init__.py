"""memgraph_plugin."""
