"""A chat's graph versions through the service: commits, rollbacks and their targets, deferred
blocks, imports and forks."""
