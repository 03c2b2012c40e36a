"""The server chapter's steps: small programs that grow into stage 2's server.

Each runs on its own (``python -m stage2_generators.server.steps.NAME``):
it starts a server on a free port, runs a few clients against it, prints
what happened and stops.  In order: ``accept``, ``buffered``, ``drain``,
``idle``, ``lock``.
"""
