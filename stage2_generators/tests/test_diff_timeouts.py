"""Differential tests of timeout, timeout_at and Timeout: on asyncio and stage 2.

The deadline cancels the block where it waits; only the block's end turns
that cancellation into TimeoutError, and only its own: an outer deadline's
or anyone else's cancellation goes on as CancelledError.  Also
``expired()``, ``when()`` and ``reschedule()``, and the cancel requests
counted with ``cancelling()`` and taken back with ``uncancel()``.
"""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import pytest

SHORT = 0.01  # A deadline that passes during a sleep(3600).


def test_a_deadline_that_passes_raises_timeout_error(lib: SimpleNamespace) -> None:
    steps: list[str] = []

    async def main() -> tuple[bool, list[str]]:
        try:
            async with lib.timeout(SHORT) as deadline:
                try:
                    await lib.sleep(3600)
                    steps.append("never")
                except lib.CancelledError:
                    steps.append("cancelled inside the block")
                    raise
        except TimeoutError:
            steps.append("timeout error after it")
        return deadline.expired(), steps

    assert lib.run(main()) == (
        True,
        ["cancelled inside the block", "timeout error after it"],
    )


def test_a_block_in_time_is_left_alone(lib: SimpleNamespace) -> None:
    async def main() -> tuple[str, bool, bool, int]:
        loop = lib.get_running_loop()
        async with lib.timeout(3600) as deadline:
            value = await value_soon(lib, "in time")
        close_to_an_hour = abs(deadline.when() - loop.time() - 3600) < 60
        return value, deadline.expired(), close_to_an_hour, lib.current_task().cancelling()

    assert lib.run(main()) == ("in time", False, True, 0)


async def value_soon(lib: SimpleNamespace, value: Any) -> Any:
    await lib.sleep(0)
    return value


def test_timeout_none_never_expires(lib: SimpleNamespace) -> None:
    async def main() -> tuple[Any, bool]:
        async with lib.timeout(None) as deadline:
            await lib.sleep(0)
        return deadline.when(), deadline.expired()

    assert lib.run(main()) == (None, False)


def test_timeout_at_takes_a_loop_time(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool]:
        when = lib.get_running_loop().time() + SHORT
        with pytest.raises(TimeoutError):
            async with lib.timeout_at(when) as deadline:
                await lib.sleep(3600)
        return deadline.when() == when, deadline.expired()

    assert lib.run(main()) == (True, True)


def test_a_deadline_already_past_cancels_at_the_first_wait(lib: SimpleNamespace) -> None:
    steps: list[str] = []

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with lib.timeout(-1):
                steps.append("the block starts")
                await lib.sleep(0)
                steps.append("never")

    lib.run(main())
    assert steps == ["the block starts"]


def test_the_timeout_class_is_a_context_manager_itself(lib: SimpleNamespace) -> None:
    async def main() -> bool:
        deadline = lib.Timeout(lib.get_running_loop().time() + SHORT)
        with pytest.raises(TimeoutError):
            async with deadline:
                await lib.sleep(3600)
        return deadline.expired()

    assert lib.run(main())


def test_reschedule_moves_the_deadline(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool]:
        loop = lib.get_running_loop()
        with pytest.raises(TimeoutError):
            async with lib.timeout(None) as deadline:
                deadline.reschedule(loop.time() + SHORT)
                await lib.sleep(3600)
        async with lib.timeout(SHORT) as later:
            later.reschedule(loop.time() + 3600)
            await lib.sleep(2 * SHORT)  # Past the first deadline, not the new one.
        return deadline.expired(), later.expired()

    assert lib.run(main()) == (True, False)


def test_reschedule_to_none_removes_the_deadline(lib: SimpleNamespace) -> None:
    async def main() -> tuple[Any, bool]:
        async with lib.timeout(SHORT) as deadline:
            deadline.reschedule(None)
            await lib.sleep(2 * SHORT)
        return deadline.when(), deadline.expired()

    assert lib.run(main()) == (None, False)


def test_reschedule_outside_the_block_is_refused(lib: SimpleNamespace) -> None:
    async def main() -> list[str]:
        refused = []
        deadline = lib.timeout(3600)
        try:
            deadline.reschedule(None)
        except RuntimeError:
            refused.append("before")
        with pytest.raises(TimeoutError):
            async with lib.timeout(SHORT) as expired:
                await lib.sleep(3600)
        try:
            expired.reschedule(None)
        except RuntimeError:
            refused.append("expired")
        return refused

    assert lib.run(main()) == ["before", "expired"]


def test_an_inner_deadline_is_the_inner_blocks_own(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool, str]:
        async with lib.timeout(3600) as outer:
            try:
                async with lib.timeout(SHORT) as inner:
                    await lib.sleep(3600)
            except TimeoutError:
                pass
            value = await value_soon(lib, "the outer block goes on")
        return inner.expired(), outer.expired(), value

    assert lib.run(main()) == (True, False, "the outer block goes on")


def test_an_outer_deadline_is_not_taken_for_an_inner_one(lib: SimpleNamespace) -> None:
    steps: list[str] = []

    async def main() -> tuple[bool, bool]:
        try:
            async with lib.timeout(SHORT) as outer:
                try:
                    async with lib.timeout(3600) as inner:
                        await lib.sleep(3600)
                except TimeoutError:
                    steps.append("inner TimeoutError: wrong")
                except lib.CancelledError:
                    steps.append("inner block lets CancelledError out")
                    raise
        except TimeoutError:
            steps.append("outer TimeoutError")
        return inner.expired(), outer.expired()

    assert lib.run(main()) == (False, True)
    assert steps == ["inner block lets CancelledError out", "outer TimeoutError"]


def test_two_deadlines_passing_together_are_the_outers(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, bool, str]:
        when = lib.get_running_loop().time() + SHORT
        result = "none"
        try:
            async with lib.timeout_at(when) as outer:
                try:
                    async with lib.timeout_at(when) as inner:
                        await lib.sleep(3600)
                except TimeoutError:
                    result = "inner TimeoutError"
        except TimeoutError:
            result = "outer TimeoutError"
        return inner.expired(), outer.expired(), result

    # Both cancel the task; the inner block sees two requests, keeps its
    # own, and lets the CancelledError out to the outer block.
    assert lib.run(main()) == (True, True, "outer TimeoutError")


def test_a_cancellation_from_outside_is_not_a_timeout(lib: SimpleNamespace) -> None:
    seen: list[str] = []

    async def child() -> None:
        try:
            async with lib.timeout(3600) as deadline:
                await lib.sleep(3600)
        except TimeoutError:
            seen.append("TimeoutError: wrong")
        except lib.CancelledError:
            seen.append(f"CancelledError, expired={deadline.expired()}")
            raise

    async def main() -> bool:
        task = lib.create_task(child())
        await lib.sleep(0)
        task.cancel()
        await lib.gather(task, return_exceptions=True)
        return task.cancelled()

    assert lib.run(main())
    assert seen == ["CancelledError, expired=False"]


def test_an_outside_cancel_beside_an_expiry_wins(lib: SimpleNamespace) -> None:
    async def child() -> None:
        async with lib.timeout(0):  # Expires on the next turn of the loop.
            lib.current_task().cancel()  # And someone else cancels too.
            await lib.sleep(3600)

    async def main() -> bool:
        task = lib.create_task(child())
        await lib.gather(task, return_exceptions=True)
        return task.cancelled()

    assert lib.run(main())


def test_a_block_that_swallows_the_cancellation_ends_quietly(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, int, str]:
        async with lib.timeout(SHORT) as deadline:
            # No TimeoutError then: no CancelledError comes out of the block.
            with contextlib.suppress(lib.CancelledError):
                await lib.sleep(3600)
        await lib.sleep(0)
        return deadline.expired(), lib.current_task().cancelling(), "went on"

    assert lib.run(main()) == (True, 0, "went on")


def test_a_timeout_around_a_task_group_cancels_its_children(lib: SimpleNamespace) -> None:
    async def main() -> list[bool]:
        children = []
        with pytest.raises(TimeoutError):
            async with lib.timeout(SHORT), lib.TaskGroup() as group:
                children = [group.create_task(lib.sleep(3600)) for _ in range(3)]
        return [child.cancelled() for child in children]

    assert lib.run(main()) == [True, True, True]


def test_wait_for_counts_its_own_cancel_and_takes_it_back(lib: SimpleNamespace) -> None:
    async def main() -> tuple[int, int]:
        task = lib.current_task()
        before = task.cancelling()
        with pytest.raises(TimeoutError):
            await lib.wait_for(lib.sleep(3600), SHORT)
        return before, task.cancelling()

    assert lib.run(main()) == (0, 0)


def test_uncancel_lets_a_task_go_on_after_a_handled_cancel(lib: SimpleNamespace) -> None:
    async def child() -> str:
        try:
            await lib.sleep(3600)
        except lib.CancelledError:
            lib.current_task().uncancel()  # Handled: no longer being cancelled.
        await lib.sleep(0)
        return f"went on, cancelling={lib.current_task().cancelling()}"

    async def main() -> tuple[str, bool]:
        task = lib.create_task(child())
        await lib.sleep(0)
        task.cancel()
        return await task, task.cancelled()

    assert lib.run(main()) == ("went on, cancelling=0", False)


def test_cancel_of_a_done_task_is_not_counted(lib: SimpleNamespace) -> None:
    async def main() -> tuple[bool, int]:
        task = lib.create_task(lib.sleep(0))
        await task
        return task.cancel(), task.cancelling()

    assert lib.run(main()) == (False, 0)
