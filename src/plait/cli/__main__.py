"""`python -m plait.cli ARGS` → the same as `plait ARGS` (plait.cli was a module before it held the commands)."""

from plait.cli import main

raise SystemExit(main())
