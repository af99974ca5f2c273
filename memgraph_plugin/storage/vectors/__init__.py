"""Node vectors in storage: vector tables, coarse lists, the ANN index."""
