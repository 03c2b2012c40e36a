"""Stage 1 against the crawler contract: the shared acceptance suite."""

import stage1_callbacks
from tests.acceptance import AcceptanceTests


class TestAcceptance(AcceptanceTests):
    stage = stage1_callbacks
    shape = "callbacks"
