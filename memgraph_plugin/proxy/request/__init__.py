"""What a chat-completions request carries: the conversation, its body read and decoded, its tokens
and the context budget."""
