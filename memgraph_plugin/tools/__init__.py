"""What is not the library: the plugin's ``memgraph-host`` sub-commands, the demo and the SVG
graph picture. Nothing in the library imports from here."""
