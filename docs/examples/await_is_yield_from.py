"""``await`` is ``yield from`` with a type check: the bytecode, then the check.

First the two functions below are compiled and their instructions compared:
they differ in one instruction, the one that gets the iterator to drive
(``GET_YIELD_FROM_ITER`` for ``yield from``, ``GET_AWAITABLE`` for
``await``); the loop that sends values in and passes yielded ones out is
the same.  The number of instructions changes between Python versions, the
one difference does not (3.11 to 3.13).

Then the check itself: ``await`` refuses a plain generator, accepts the
same generator once ``types.coroutine`` marks it, and accepts stage 2's
``Future`` through its ``__await__``.  Only ``send()`` is called, as a
Task does.

Run it from the repository root::

    python docs/examples/await_is_yield_from.py
"""

import dis
import sys
import types
from typing import Any

from stage2_generators.futures import Future
from stage2_generators.loop import EventLoop


def with_yield_from(x: Any) -> Any:
    return (yield from x)


async def with_await(x: Any) -> Any:
    return await x


def instructions(function: Any) -> list[str]:
    code = dis.get_instructions(function)
    return [f"{i.opname} {i.argrepr}".strip() for i in code]


def compare_bytecode() -> None:
    old, new = instructions(with_yield_from), instructions(with_await)
    different = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    same = len(old) - len(different)
    print(f"{len(old)} instructions each, {same} the same; the others:")
    for a, b in different:
        print(f"    yield from: {a:22} await: {b}")


def one_yield() -> Any:
    """A plain generator: it yields once, then returns."""
    received = yield "a value for the driver"
    return received


def drive(coroutine: Any) -> Any:
    """Do what a Task does: send() until the coroutine returns."""
    yielded = coroutine.send(None)
    try:
        coroutine.send(f"reply to {yielded!r}")
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("it yielded twice")


def check_the_type_check() -> None:
    try:
        drive(with_await(one_yield()))
    except TypeError as error:
        print(f"await a plain generator:  TypeError\n    {error}")
    marked = types.coroutine(one_yield)  # Sets a flag on the code object.
    print(f"await a marked generator: {drive(with_await(marked()))!r}")
    loop = EventLoop()
    future = Future(loop=loop)
    coroutine = with_await(future)  # Through Future.__await__ (= __iter__).
    itself = coroutine.send(None) is future
    print(f"await a pending Future:   yields the future itself: {itself}")
    future.set_result("its result")
    try:
        coroutine.send(None)
    except StopIteration as stop:
        print(f"and once it is done:      {stop.value!r}")
    loop.close()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit("usage: python docs/examples/await_is_yield_from.py")
    compare_bytecode()
    check_the_type_check()
