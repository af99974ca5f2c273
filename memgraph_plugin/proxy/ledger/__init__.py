"""The proxy's memory per chat: which chat a request belongs to, the reconciliation ledger, the
blocks extracted and the proxy's files."""
