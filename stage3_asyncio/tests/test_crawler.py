"""The stage 3 crawler beyond the shared contract: what its task group adds.

The acceptance suite (test_acceptance.py) checks the contract itself; the
task group's test is written once, in tests/acceptance.py, for stages 2 and 3.
"""

import stage3_asyncio
from tests.acceptance import TaskGroupTests


class TestTaskGroup(TaskGroupTests):
    stage = stage3_asyncio
