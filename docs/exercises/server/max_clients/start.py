"""Exercise: at most ``MAX_CLIENTS`` connections served at once.

Each connection gets a task, and the server takes every connection that
comes: ten thousand clients, ten thousand tasks, each with its buffers.
Make ``handler`` serve at most ``MAX_CLIENTS`` connections at once.  A
connection beyond that gets its request read and answered with ``503
Service Unavailable``, then closed.  Once a connection ends, its place
is free for the next client.

``handler`` is what the server runs for each connection; today it is the
finished server's own, ``site_handler``.
"""

from shared.testsite.site import Site
from stage2_generators.server.http_server import Limits, site_handler
from stage2_generators.server.tcp import ClientConnected

MAX_CLIENTS = 2  # Connections served at once; more get 503.


def handler(site: Site, limits: Limits) -> ClientConnected:
    """Return the callback that serves one connection."""
    return site_handler(site, limits)
