"""Bulk loading a store: from the contract's JSON, from a snapshot's columns, lazily.

`gc_paused` / `paused`: the host's one process-wide pause of the cyclic collector
(`host.collector_pause`), which every bulk load of the plugin holds (storage reaches it here:
it does not import the host)."""

from host.collector_pause import gc_paused, paused

__all__ = ["gc_paused", "paused"]
