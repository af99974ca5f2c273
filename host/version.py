"""The host's version, in a leaf module so any part of the host can read it without a cycle."""

__version__ = "0.1.0"
