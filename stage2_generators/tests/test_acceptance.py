"""Stage 2 against the crawler contract: the shared acceptance suite."""

import stage2_generators
from tests.acceptance import AcceptanceTests


class TestAcceptance(AcceptanceTests):
    stage = stage2_generators
    shape = "generators"
