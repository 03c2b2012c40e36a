"""The server chapter's steps: small programs that grow into stage 2's server.

Each runs on its own (``python -m stage2_generators.server.steps.NAME``):
it starts a server on a free port, runs a few clients against it, prints
what happened and how long it took, and stops; with ``--port N`` it serves
on port N until Ctrl-C instead (``command.py``, their shared command line,
is no step).  In order: ``accept``, ``buffered``, ``drain``, ``idle``,
``lock``; then ``llhttp``, which the chapter shows after the finished
server: the test site over HTTP, parsed in C.
"""
