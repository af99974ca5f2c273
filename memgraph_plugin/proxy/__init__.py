"""The OpenAI-compatible memory proxy and the JSON memory API (``docs/proxy.md``,
``docs/http-api.md``): chat identity, history reconciliation, recall injection, the upstream relay.

Nothing here serves HTTP by itself: ``memgraph_plugin/web/app.py`` builds the one Starlette app.
"""
