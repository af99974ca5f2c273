"""Damaged data files: checking every table and fragment (`memgraph-host check`) and bringing
every chat back to its newest intact state (`memgraph-host repair`)."""
