"""Chats the host keeps: messages, the chat-id rule, and the context a plugin is handed."""

from host.chats.chats import (
    FORMAT,
    Chat,
    ChatStore,
    MessagesView,
    chat_file_name,
)

__all__ = [
    "Chat",
    "ChatStore",
    "FORMAT",
    "MessagesView",
    "chat_file_name",
]
