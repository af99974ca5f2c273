"""The web side: the graph explorer, and the one app factory that also serves the JSON memory
API and the memory proxy (``memgraph-host serve`` / ``memgraph-host proxy``)."""

from .app import build_app, start_server
from .explorer import GraphExplorer, UnknownChat
from .server import ExplorerServer

__all__ = ["ExplorerServer", "GraphExplorer", "UnknownChat", "build_app", "start_server"]
