"""`python -m kopa_gen` is the `kopa-gen` command."""

from kopa_gen.cli import main

raise SystemExit(main())
