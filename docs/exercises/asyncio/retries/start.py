"""Exercise: try again after a 503.

A server that is busy answers ``503 Service Unavailable``: come back
later.  ``fetch_status`` asks once and returns whatever came.  Make it
ask again after a 503, up to ``attempts`` requests in all, sleeping
``backoff`` seconds before the second, twice that before the third, and
so on (``asyncio.sleep``: the other fetches go on meanwhile).  Any other
status is final, and so is the last attempt's.
"""

import aiohttp


async def fetch_status(
    session: aiohttp.ClientSession, url: str, attempts: int, backoff: float
) -> int:
    """Return the status of a GET of ``url``, trying again after a 503."""
    async with session.get(url) as response:
        await response.read()
        return response.status
