"""The engine's bulk loads pause the cyclic collector with the host's one process-wide pause
(`host.collector_pause`), so a chat file read and a store load at once count as one pause."""

from host.collector_pause import gc_paused, paused

__all__ = ["gc_paused", "paused"]
