"""Bulk loading a store: from the original's JSON, from a snapshot's columns, lazily."""
