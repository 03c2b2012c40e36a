"""Run a step against a port where nothing listens, and show how it ends.

The chapters on stages 1 and 2 show with it what a crawl step does when
every connection is refused: the command a reader types, what the step
printed, its traceback if any, and its exit status when it failed::

    python docs/examples/refused.py stage1_callbacks.steps.crawl
    python docs/examples/refused.py stage2_generators.steps.crawl

The port is one this script holds bound but never listens on, so the
operating system refuses every connection to it, on any machine, and no
other program can take it meanwhile.
"""

import socket
import subprocess
import sys

DEADLINE = 60  # Seconds; a refused connection fails in milliseconds.
STEP = "stage2_generators.steps.crawl"  # The step the chapter shows.


def main(step: str) -> None:
    """Run ``step`` (a module name) against a refusing port."""
    with socket.socket() as unheard:
        unheard.bind(("127.0.0.1", 0))  # Bound, not listening: refused.
        url = f"http://127.0.0.1:{unheard.getsockname()[1]}/"
        done = subprocess.run(
            [sys.executable, "-m", step, url],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
    print(f"$ python -m {step} {url}")
    print(done.stdout + done.stderr, end="")
    if done.returncode:  # A step that ends normally ends on its own line.
        print(f"$ echo $?\n{done.returncode}")


if __name__ == "__main__":
    # One optional argument: the step, as ``python -m`` takes it.
    if len(sys.argv) > 2 or sys.argv[1:2] and sys.argv[1].startswith("-"):
        sys.exit("usage: python docs/examples/refused.py [STEP]")
    main(sys.argv[1] if len(sys.argv) > 1 else STEP)
