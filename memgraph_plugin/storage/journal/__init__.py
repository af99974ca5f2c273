"""The journal: the append-only `commits` table, its change rows and its compaction."""
