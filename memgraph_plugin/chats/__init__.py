"""The loaded chats: the service's cache of chats kept in step with storage, their vectors, memory
budget and recent commits.
"""
