"""The in-memory `Store`: nodes, edges, transactions and the change log, rolled back in memory."""
