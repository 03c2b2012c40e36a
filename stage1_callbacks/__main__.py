"""Run stage 1 from the command line: ``python -m stage1_callbacks ROOT...``."""

from shared.cli.main import main

raise SystemExit(main(stage="callbacks"))
