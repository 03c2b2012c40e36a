"""The server side of stage 2: the same loop, turned around to accept connections.

The crawler's library is the top of the package (``events``, ``futures``,
``tasks``, ``loop``, ``queues``, ``locks``, ``crawler``, ``tls``); the
crawler needs nothing from here.  This subpackage is the server chapter's
code, built on that library:

- ``streams``: ``StreamReader`` and a buffered ``StreamWriter`` with ``drain``;
- ``tcp``: ``start_server`` and ``Server``, a task that accepts and a task
  per client;
- ``http_server``: HTTP/1.1 for the test site, parsed by llhttp, and
  ``SiteServerThread`` to serve it from a thread;
- ``steps/``: the chapter's small programs that grow into it.

``python -m stage2_generators.server`` serves the test site with it.
"""
