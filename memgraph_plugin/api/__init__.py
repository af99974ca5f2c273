"""What plugins call on one chat (the contract's read and write API): `Session`, `ReadApi`,
`WriteApi`, the injection hubs and the legacy external functions, all over `engine/`.

Plugins import the public names from `memgraph_plugin`; the modules here hold them.
"""
