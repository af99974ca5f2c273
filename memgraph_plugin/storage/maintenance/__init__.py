"""Background maintenance: the scheduler, the child process, checkpoints (snapshots written from
storage alone) and table compaction. The child's main loop is `storage/maintenance_worker.py`."""
