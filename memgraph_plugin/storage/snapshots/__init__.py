"""Columnar snapshots of chats: the snapshot tables and the coarse lists stored with their
vectors."""
