"""Coming back when asked: what to do about a 429 or 503 answer, for all stages.

A server that answers 429 ("too many requests") or 503 ("unavailable") is
asking the crawler to come back later; with a ``Retry-After`` header it
says when (RFC 9110, section 10.2.3): a number of seconds, or an HTTP date.
This module reads that header and decides, free of any I/O, whether to try
the URL again and after how long.  The wait is the host's, not the URL's:
``shared.crawl.polite.Politeness.hold`` keeps every request to the host back
until then, and each stage waits for it the way it waits for the delay
between two requests (a timer in stage 1, a sleep in stages 2 and 3).

The decisions, in order:

- a Retry-After longer than ``max_retry_after`` is not waited for: the
  answer is kept, recorded with a ``RetryAfterTooLong`` that says so;
- once ``max_tries`` tries are spent, the last answer is kept as it is;
- a Retry-After that can be read is waited for (a date in the past: no wait);
- without one, or with one that cannot be read (negative, garbage), the
  wait grows exponentially from ``BACKOFF_BASE``, with random "jitter" so
  that many clients turned away together do not come back together.

Left out compared with a production crawler: remembering a host's waits
across crawls, and slowing down for good a host that keeps answering 429.
"""

from __future__ import annotations

import dataclasses
import datetime
import email.utils
import math
import random
import time

from shared.web.http import Response

RETRY_STATUSES = frozenset({429, 503})  # The answers that mean "come back later".
BACKOFF_BASE = 0.5  # Seconds before the second try when no Retry-After says.
MAX_DIGITS = 12  # More digits than this is centuries; taken as "forever".


class RetryAfterTooLong(Exception):
    """The server asked for a longer wait than ``max_retry_after``: not waited."""


# --8<-- [start:parse]
def retry_after_seconds(value: str, now: float) -> float:
    """Return the seconds a ``Retry-After`` value asks for (0: a date past).

    ``now`` is the wall clock (``time.time()``), which an HTTP date is read
    against.  Raises ValueError for a value that is neither a whole number
    of seconds nor an HTTP date (a negative number is neither).
    """
    text = value.strip()
    if text.isascii() and text.isdigit():  # delay-seconds: 1*DIGIT.
        return float(text) if len(text) <= MAX_DIGITS else math.inf
    try:
        date = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        problem = f"Retry-After is neither seconds nor a date: {value!r}"
        raise ValueError(problem) from None
    if date.tzinfo is None:  # The asctime form has no zone: it is GMT.
        date = date.replace(tzinfo=datetime.UTC)
    return max(0.0, date.timestamp() - now)


# --8<-- [end:parse]


@dataclasses.dataclass(frozen=True)
class Backoff:
    """What to do about a 429 or 503 answer: wait ``seconds`` and try again, or not.

    ``seconds`` is None when the answer is kept; ``problem`` then says why,
    if it is worth recording.  ``kind`` names the wait for the report:
    ``retry_after``, ``backoff``, or ``bad_retry_after`` (a backoff taken
    because the header could not be read).
    """

    seconds: float | None
    kind: str = ""
    problem: Exception | None = None


def backoff(
    response: Response,
    attempt: int,
    max_tries: int,
    max_retry_after: float,
    now: float | None = None,
    jitter: random.Random | None = None,
) -> Backoff | None:
    """Decide on try number ``attempt`` (from 0) of a URL; None if it is no 429 or 503.

    ``now`` is the wall clock, for a Retry-After date (default: ``time.time()``).
    ``jitter`` draws a backoff's jitter (default: the ``random`` module's numbers).
    """
    if response.status not in RETRY_STATUSES:
        return None
    kind, seconds = "backoff", None
    value = response.headers.get("retry-after")
    if value is not None:
        try:
            seconds = retry_after_seconds(value, time.time() if now is None else now)
            kind = "retry_after"
        except ValueError:
            kind = "bad_retry_after"
    if seconds is not None and seconds > max_retry_after:
        asked = "forever" if math.isinf(seconds) else f"{seconds:.0f} s"
        too_long = RetryAfterTooLong(
            f"{response.status} with Retry-After {asked}, over max_retry_after={max_retry_after:g}"
        )
        return Backoff(None, kind, too_long)
    if attempt + 1 >= max_tries:
        return Backoff(None, kind)
    if seconds is None:
        seconds = exponential(attempt, max_retry_after, jitter)
    return Backoff(seconds, kind)


def exponential(attempt: int, cap: float, jitter: random.Random | None = None) -> float:
    """Return a wait that doubles with each try, at most ``cap``, less up to half at random.

    ``jitter`` draws the random part (a simulation's seeded numbers); default: ``random``.
    """
    longest = min(cap, BACKOFF_BASE * 2.0 ** min(attempt, 60))
    return longest * (jitter or random).uniform(0.5, 1.0)
