"""Node vectors in storage: the vector tables and the ANN index for very large chats."""
