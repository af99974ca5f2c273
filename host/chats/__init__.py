"""Chats the host keeps: messages, the chat-id rule, the per-chat lock across processes, and the
context a plugin is handed."""

from host.chats.chat_lock import ChatBusy, ChatLock, FileChatLock
from host.chats.chats import (
    FORMAT,
    Chat,
    ChatStore,
    MessagesView,
    chat_file_name,
)

__all__ = [
    "Chat",
    "ChatBusy",
    "ChatLock",
    "ChatStore",
    "FORMAT",
    "FileChatLock",
    "MessagesView",
    "chat_file_name",
]
