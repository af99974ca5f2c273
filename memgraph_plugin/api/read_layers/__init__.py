"""The read API's layers A-C (data, topology, recall primitives, vector search) and the plumbing
they share; `api/read.py` assembles them into `ReadApi`."""
