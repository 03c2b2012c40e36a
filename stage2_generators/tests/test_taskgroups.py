"""Stage 2's own task group tests: ``run_in_group``, ``async with`` for generators.

The group's behaviour is checked on asyncio and stage 2 alike in
test_diff_taskgroups.py; this helper has no asyncio counterpart.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from stage2_generators.futures import CancelledError
from stage2_generators.loop import run
from stage2_generators.taskgroups import TaskGroup, run_in_group
from stage2_generators.tasks import Task, create_task, current_task, sleep


def fail_after(turns: int, error: BaseException) -> Generator[Any, None, None]:
    for _ in range(turns):
        yield from sleep(0)
    raise error


def test_the_body_runs_in_the_group_and_its_result_comes_back() -> None:
    children: list[Task] = []

    def body(group: TaskGroup) -> Generator[Any, None, str]:
        children.append(group.create_task(sleep(0, result="child")))
        yield from sleep(0)
        return "body"

    assert run(run_in_group(body)) == "body"
    assert children[0].result() == "child"


def test_a_childs_error_cancels_the_body_and_comes_out_in_a_group() -> None:
    steps: list[str] = []

    def body(group: TaskGroup) -> Generator[Any, None, None]:
        group.create_task(fail_after(1, ValueError("child")))
        try:
            yield from sleep(3600)
        except CancelledError:
            steps.append("body cancelled")
            raise

    with pytest.raises(ExceptionGroup) as raised:
        run(run_in_group(body))
    assert [repr(e) for e in raised.value.exceptions] == ["ValueError('child')"]
    assert steps == ["body cancelled"]


def test_the_bodys_error_joins_the_group_and_stops_the_children() -> None:
    children: list[Task] = []

    def body(group: TaskGroup) -> Generator[Any, None, None]:
        children.append(group.create_task(sleep(3600)))
        yield from sleep(0)
        raise KeyError("body")

    with pytest.raises(ExceptionGroup) as raised:
        run(run_in_group(body))
    assert [repr(e) for e in raised.value.exceptions] == ["KeyError('body')"]
    assert children[0].cancelled()


def test_a_cancellation_from_outside_goes_on_as_cancelled_error() -> None:
    def body(group: TaskGroup) -> Generator[Any, None, None]:
        group.create_task(sleep(3600))
        yield from sleep(3600)

    def main() -> Generator[Any, None, tuple[bool, bool, int]]:
        task = create_task(run_in_group(body))
        yield from sleep(0)
        task.cancel()
        while not task.done():
            yield from sleep(0)
        me = current_task()
        assert me is not None
        return task.cancelled(), task.cancelling() > 0, me.cancelling()

    assert run(main()) == (True, True, 0)
