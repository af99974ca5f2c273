"""The in-memory `Store`: nodes, edges, transactions, the identity index and the candidate pool."""
