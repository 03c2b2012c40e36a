"""``python -m shared.page MODULE``: run a step in the page's simulated world, in a terminal.

It prints what the step's Run button prints in the docs, on this Python:
the same world (the test site on an in-memory network, 50 ms an answer),
the same seed, so the same lines.  ``--seed N`` draws another world.
``python -m shared.page docs/generators.md:3`` prints the third ``>>>``
session of that page as its Run button does (``session.py``); it exits
with status 1 when an input printed other than the page shows.

One more thing must match: the order of a set of strings, which a
crawling step iterates over its links in.  It follows the strings'
hashes, which Python draws at random in each process unless
PYTHONHASHSEED says otherwise; the page runs with ``PYTHONHASHSEED=0``,
so this command starts Python again with it when it is not set so.
"""

from __future__ import annotations

import argparse
import os
import sys

from shared.page.run import run_step
from shared.page.session import is_session, run_session


def main(argv: list[str] | None = None) -> int:
    """Run the step named on the command line; return its exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m shared.page",
        description="Run a step of stage 1 or 2 in the simulated world the docs' Run buttons use.",
    )
    parser.add_argument(
        "module",
        help="the step, such as stage1_callbacks.steps.fetcher, or a page's session, "
        "such as docs/generators.md:3",
    )
    parser.add_argument("--seed", type=int, default=0, help="the world's seed (default: 0)")
    args = parser.parse_args(argv)
    if os.environ.get("PYTHONHASHSEED") != "0":  # Again, with the page's string hashes.
        command = [sys.executable, "-m", "shared.page", *(sys.argv[1:] if argv is None else argv)]
        os.execve(sys.executable, command, {**os.environ, "PYTHONHASHSEED": "0"})
    try:
        if is_session(args.module):
            session = run_session(args.module, sys.stdout.write)
            for number in session.differs:
                print(f"input {number} printed other than the page shows", file=sys.stderr)
            return session.status
        outcome = run_step(args.module, sys.stdout.write, seed=args.seed)
    except ValueError as error:
        parser.error(str(error))
    return outcome.status


if __name__ == "__main__":
    sys.exit(main())
