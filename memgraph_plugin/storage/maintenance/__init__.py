"""Background maintenance: the child process, its loop, table compaction."""
