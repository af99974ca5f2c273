"""``python -m host``: the ``memgraph-host`` CLI."""

from host.cli.entry import main

raise SystemExit(main())
