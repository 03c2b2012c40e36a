"""Run the stage 2 crawler: ``python -m stage2_generators ROOT...``."""

from shared.cli.main import main

raise SystemExit(main(stage="generators"))
