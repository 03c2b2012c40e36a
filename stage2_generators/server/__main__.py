"""Serve the test site with stage 2's HTTP server: ``python -m stage2_generators.server``.

The options are those of ``python -m shared.testsite``, which serves the same
site with aiohttp.web.
"""

from shared.testsite.site import main
from stage2_generators.server.http_server import serve_with_generators

main(prog="python -m stage2_generators.server", serve=serve_with_generators)
