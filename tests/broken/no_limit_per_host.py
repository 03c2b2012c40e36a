"""Crowds a host: a crawler that forgets max_per_host and keeps max_tasks requests at it."""

import asyncio

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from shared.crawl.polite import origin_of
from stage1_callbacks.crawler import HostLine, Job
from stage2_generators.locks import Semaphore
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 5
RULE = "test_max_per_host_is_reached_and_never_exceeded [1, 2, 3]: rule docs/contract.md#politeness"
HINTS = {
    "callbacks": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
    "generators": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
    "asyncio": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
}


class NoLimitPerHostCallbacks(stage1_callbacks.Crawler):
    def fetch(self, job: Job) -> None:
        line = self.host_lines.setdefault(origin_of(job.url), HostLine())
        if line.in_flight >= self.max_tasks:  # The bug: max_per_host is not read.
            line.waiting.append(job)
            return
        line.in_flight += 1
        self.when_due(job)


class NoLimitPerHostGenerators(stage2_generators.Crawler):
    def host_slot(self, url: str) -> Semaphore:
        origin = origin_of(url)
        if origin not in self.host_slots:
            self.host_slots[origin] = Semaphore(self.max_tasks)  # The bug: not max_per_host.
        return self.host_slots[origin]


class NoLimitPerHostAsyncio(stage3_asyncio.Crawler):
    def host_slot(self, url: str) -> asyncio.Semaphore:
        origin = origin_of(url)
        if origin not in self.host_slots:
            self.host_slots[origin] = asyncio.Semaphore(self.max_tasks)  # The bug, as above.
        return self.host_slots[origin]


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, NoLimitPerHostCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, NoLimitPerHostGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, NoLimitPerHostAsyncio)
    shape = "asyncio"
