"""Columnar snapshots of chats: the column format, keyword rows, checkpoints."""
