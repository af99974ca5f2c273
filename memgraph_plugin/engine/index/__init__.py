"""The per-store indices below the `Store`: identity (names), the candidate pool, attributes built
on first read."""
