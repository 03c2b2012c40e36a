"""``python -m shared.cli``: the ``crawl`` command, for a machine without its script."""

import sys

from shared.cli.main import main

sys.exit(main())
