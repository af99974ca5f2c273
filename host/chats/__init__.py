"""Chats the host keeps: messages, the chat-id rule, the per-chat lock across processes, and the
context a plugin is handed."""

from host.chats.chat_files import (
    FORMAT,
    Chat,
    ChatStore,
    MessagesView,
    chat_file_name,
)
from host.chats.chat_lock import ChatBusy, ChatLock, FileChatLock

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
