"""The stage 3 crawler beyond the shared contract: what its task group adds.

The acceptance suite (test_acceptance.py) checks the contract itself; the
task group's test and the shared robots.txt wait's are written once, in
tests/acceptance.py, for stages 2 and 3.
"""

import asyncio

import stage3_asyncio
from tests.acceptance import SharedRobotsTests, TaskGroupTests


class TestTaskGroup(TaskGroupTests):
    stage = stage3_asyncio


class TestSharedRobots(SharedRobotsTests):
    stage = stage3_asyncio
    lib = asyncio
