"""``python -m shared.testsite``: serve the test site with aiohttp.web.

``python -m stage2_generators.server`` serves the same site, with the same
options, on stage 2's own HTTP server.
"""

from shared.testsite.server import serve_with_aiohttp
from shared.testsite.site import main

main(serve=serve_with_aiohttp)
