"""Stage 3 against the acceptance suite."""

import stage3_asyncio
from tests.acceptance import AcceptanceTests


class TestAcceptance(AcceptanceTests):
    stage = stage3_asyncio
    shape = "asyncio"
