"""The column format of a chat's graph: the contract's JSON shapes, state and delta tables, and a
snapshot row set's keyword columns (what snapshots and the journal's readers share)."""
