"""The LLM's hook implementations: the extractor, the router (a rerank) and the summariser."""
