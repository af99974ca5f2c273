"""Columnar snapshots of chats: the snapshot tables and the vector rows of their chains."""
