"""Run stage 3 from the command line: ``python -m stage3_asyncio ROOT...``."""

from shared.cli.main import main

raise SystemExit(main(stage="asyncio"))
