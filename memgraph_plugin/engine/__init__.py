"""The memory graph in memory: records, schema, the `Store` and its indices, views, and the one
batch pipeline that writes to it. No I/O and no host: `api/`, `storage/` and `recall/` build on it.

Plugins import the public names from `memgraph_plugin`; the modules here are the engine's own.
"""
