"""Bulk loading a store: from the contract's JSON, from a snapshot's columns, lazily."""
