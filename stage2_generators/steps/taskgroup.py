"""Step 7 of stage 2: a first TaskGroup, on the finished stage's tasks.

A task made with ``create_task`` can outlive the code that started it,
and its error waits in it until somebody awaits it.  A ``TaskGroup`` ties
tasks to an ``async with`` block: the block's end waits until every task
started in it is done.  The first task that fails cancels the others and
the body (by cancelling the task that runs the block), and the group
raises an ``ExceptionGroup`` of the errors.  Cancelling needs the finished
stage's ``Task``.  Here ten tasks of one group fetch the ten pages.

Still wrong: the group cancels its parent and never takes that back, so
the parent stays marked as being cancelled (``cancelling()``); it
swallows a cancellation from outside while it waits; an error in the body
does not stop the children; and ``create_task`` works after the block.
Next, ``timeout`` puts a deadline on a block the same way.
"""

import contextlib
import socket

from shared.steps import (
    Progress,
    address,
    http_request,
    some_pages,
    status_line,
    url_from_argv,
)
from stage2_generators.futures import CancelledError, Future
from stage2_generators.loop import get_running_loop, run
from stage2_generators.tasks import Coroutine, Task, create_task, current_task


class TaskGroup:
    """Start tasks in an ``async with`` block; wait for all at its end."""

    async def __aenter__(self) -> "TaskGroup":
        parent = current_task()  # The task that runs the block.
        assert parent is not None, "a TaskGroup is entered inside a task"
        self.parent = parent
        self.tasks: set[Future] = set()  # Started, and not done yet.
        self.errors: list[BaseException] = []
        self.all_done: Future | None = None
        return self

    def create_task(self, coro: Coroutine) -> Task:
        task = create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.task_done)
        return task

    def task_done(self, task: Future) -> None:
        self.tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            if not self.errors:  # The first failure: stop everything else.
                for other in self.tasks:
                    other.cancel()
                self.parent.cancel()
            self.errors.append(error)
        if not self.tasks and self.all_done and not self.all_done.done():
            self.all_done.set_result(None)

    async def __aexit__(self, *exc_info: object) -> None:
        while self.tasks:
            self.all_done = get_running_loop().create_future()
            with contextlib.suppress(CancelledError):  # Ours, we hope.
                await self.all_done  # Until the last task has ended.
        if self.errors:
            # An ExceptionGroup when every error is an Exception.
            raise BaseExceptionGroup("errors in a TaskGroup", self.errors)


async def fetch(url: str, progress: Progress) -> None:
    """GET ``url`` and print its status line."""
    loop = get_running_loop()
    progress.begin(url)
    with socket.socket() as sock:
        sock.setblocking(False)
        await loop.sock_connect(sock, address(url))
        await loop.sock_sendall(sock, http_request(url))
        response = b""
        while chunk := await loop.sock_recv(sock, 4096):
            response += chunk
    progress.end(url, status_line(response))


async def main(urls: list[str]) -> None:
    progress = Progress()
    async with TaskGroup() as group:
        for url in urls:
            group.create_task(fetch(url, progress))
    print(f"{len(urls)} pages in {progress.seconds():.3f} s, one group")


if __name__ == "__main__":
    run(main(some_pages(url_from_argv())))
