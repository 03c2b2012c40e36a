"""A solution: a loop of attempts, a doubling sleep between them."""

import asyncio

import aiohttp

BUSY = 503  # Service Unavailable: the one status worth trying again.


async def fetch_status(
    session: aiohttp.ClientSession, url: str, attempts: int, backoff: float
) -> int:
    """Return the status of a GET of ``url``, trying again after a 503."""
    for attempt in range(attempts):
        if attempt > 0:
            await asyncio.sleep(backoff * 2 ** (attempt - 1))
        async with session.get(url) as response:
            await response.read()
            if response.status != BUSY:
                return response.status
    return BUSY  # Busy every time: the last answer stands.
