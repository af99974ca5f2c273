"""The live graph explorer: ``memgraph-host serve`` (a local page over a data dir's chats)."""

from .explorer import GraphExplorer, UnknownChat
from .server import ExplorerServer, start_server

__all__ = ["ExplorerServer", "GraphExplorer", "UnknownChat", "start_server"]
