"""``python -m host``: the ``memgraph-host`` CLI."""

from host.cli.cli import main

raise SystemExit(main())
