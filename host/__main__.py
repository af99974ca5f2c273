"""``python -m host``: the ``memgraph-host`` CLI."""

from host.cli import main

raise SystemExit(main())
