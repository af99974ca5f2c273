"""The LanceDB database: connecting to it, the tables' schemas and race-safe opening, reads through
pylance, and the filter strings values enter."""
