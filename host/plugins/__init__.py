"""Plugins in a host: discovery, fresh imports, records, specs and guarded hook calls."""
