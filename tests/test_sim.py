"""The simulated world (shared/sim): virtual time, the in-memory network, seeded schedules.

Every time checked here is the world's virtual clock, never the machine's:
a test that waits 10 simulated seconds for a timeout takes no real time.
"""

from __future__ import annotations

import errno
import importlib
import io
import json
import selectors
import socket
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# First: acceptance.py imports sim_acceptance.py, which refers back to it.
import tests.acceptance  # noqa: F401
from shared.record.report import write_jsonl
from shared.sim import RESET, SILENCE, Conditions, Pause, Scripted, Step, World
from shared.sim.network import FIRST_FD, KEEP_ALIVE, keeps_alive
from shared.sim.world import EPOCH
from shared.testsite.site import Site, expected_results
from stage1_callbacks.loop import EventLoop as CallbackLoop
from stage2_generators import loop as generator_loop
from stage2_generators.tasks import sleep
from tests.sim_acceptance import Answers, busy_then_ok

STAGES = ["stage1_callbacks", "stage2_generators", "stage3_asyncio"]
PAGES = 20  # A small site: each crawl here takes a fraction of a second.


@pytest.fixture(params=STAGES)
def stage(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(request.param)


def simulated_crawl(
    stage: ModuleType, world: World, pages: int = PAGES, **options: Any
) -> tuple[Any, str]:
    """Crawl the test site served in ``world``; return the crawler and its root."""
    root = world.serve(Site(pages))
    crawler = stage.Crawler(root, **options)
    crawler.simulate(world)
    stage.run(crawler)
    return crawler, root


def jsonl(crawler: Any) -> str:
    """Return the JSON Lines record of a crawl, as --json writes it."""
    file = io.StringIO()
    write_jsonl(crawler, file)
    return file.getvalue()


# --- The clock and the loops ---------------------------------------------------


def test_a_timer_runs_at_its_virtual_time_in_stage_1() -> None:
    world = World()
    loop = CallbackLoop(**world.loop_options())
    fired: list[float] = []
    loop.call_later(3600, lambda: fired.append(loop.time()))
    loop.call_later(1.5, lambda: fired.append(loop.time()))
    loop.run()
    assert fired == [1.5, 3600]
    assert world.time() == 3600


def test_a_sleep_takes_virtual_time_in_stage_2() -> None:
    world = World()

    def main() -> Any:
        yield from sleep(2.5)
        yield from sleep(600)
        return generator_loop.get_running_loop().time()

    assert generator_loop.run(main(), **world.loop_options()) == 602.5


def test_the_default_loop_keeps_the_real_clock_and_selector() -> None:
    loop = CallbackLoop()
    assert isinstance(loop.selector, selectors.DefaultSelector)
    assert loop.clock is time.monotonic
    loop.close()


def order_of_a_turn(seed: int) -> list[int]:
    """Return the order in which the callbacks of ten sockets ready together run."""
    world = World(seed)
    world.serve(Site(PAGES))
    loop = CallbackLoop(**world.loop_options())
    ran: list[int] = []

    def connected(number: int, sock: Any) -> None:
        ran.append(number)
        loop.unregister(sock)

    for number in range(10):
        sock = world.socket()
        with pytest.raises(BlockingIOError):
            sock.connect(("127.0.0.1", 8000))
        loop.register(sock, selectors.EVENT_WRITE, connected, number, sock)  # type: ignore[arg-type]
    loop.run()
    return ran


def test_seed_0_hears_of_ready_sockets_first_in_first_out() -> None:
    assert order_of_a_turn(0) == list(range(10))


def test_a_seed_permutes_ready_sockets_the_same_way_each_time() -> None:
    orders = [order_of_a_turn(seed) for seed in range(1, 6)]
    assert all(sorted(order) == list(range(10)) for order in orders)
    assert any(order != list(range(10)) for order in orders)
    assert orders == [order_of_a_turn(seed) for seed in range(1, 6)]


def test_a_seed_keeps_callbacks_in_the_order_they_were_scheduled() -> None:
    loop = CallbackLoop(**World(3).loop_options())
    ran: list[int] = []
    for number in range(10):
        loop.call_soon(ran.append, number)
    loop.run()
    assert ran == list(range(10))  # A loop's promise, which asyncio's own code needs.


def test_nothing_to_wait_for_is_an_error_not_a_hang() -> None:
    world = World()
    loop = CallbackLoop(**world.loop_options())
    sock = world.socket()
    # Never connected, so never ready: nothing could ever wake the loop.
    loop.register(sock, selectors.EVENT_READ, print)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="wait forever"):
        loop.run()


# --- The network --------------------------------------------------------------


def test_a_connection_to_nobody_is_refused() -> None:
    world = World()
    selector = world.selector()
    sock = world.socket()
    with pytest.raises(BlockingIOError):
        sock.connect(("127.0.0.1", 9))
    selector.register(sock, selectors.EVENT_WRITE)
    assert [events for _, events in selector.select(None)] == [selectors.EVENT_WRITE]
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == errno.ECONNREFUSED
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0  # Read once, as SO_ERROR is.
    with pytest.raises(OSError):
        sock.getpeername()


def requested(world: World, request: bytes) -> tuple[selectors.BaseSelector, Any]:
    """Connect to the world's site, send ``request``; return a selector watching for the answer."""
    selector = world.selector()
    sock = world.socket()
    with pytest.raises(BlockingIOError):  # A connect takes time, as on a real network.
        sock.connect(("127.0.0.1", 8000))
    selector.register(sock, selectors.EVENT_WRITE)
    selector.select(None)
    sock.send(request)
    selector.modify(sock, selectors.EVENT_READ)
    return selector, sock


def test_an_answer_arrives_after_the_latency() -> None:
    world = World(conditions=Conditions(latency=0.25))
    world.serve(Site(PAGES))
    selector, sock = requested(world, b"GET /robots.txt HTTP/1.0\r\nHost: 127.0.0.1:8000\r\n\r\n")
    with pytest.raises(BlockingIOError):
        sock.recv(100)
    assert selector.select(0.1) == [] and world.time() == 0.1  # Not yet: a timer first.
    assert len(selector.select(None)) == 1 and world.time() == 0.25
    answer = sock.recv(1 << 20)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"Disallow" in answer
    assert sock.recv(100) == b""  # Then the end: one answer per connection.


def test_a_reset_connection_raises_when_read() -> None:
    world = World(conditions=Conditions(reset=1.0))
    world.serve(Site(PAGES))
    selector, sock = requested(world, b"GET / HTTP/1.0\r\n\r\n")
    selector.select(None)
    with pytest.raises(ConnectionResetError) as caught:
        sock.recv(100)
    assert caught.value.errno == errno.ECONNRESET


def read_answer(selector: selectors.BaseSelector, sock: Any) -> bytes:
    """Wait for an answer on ``sock`` and return what has arrived by then."""
    selector.select(None)
    return bytes(sock.recv(1 << 20))


def test_an_http_1_1_connection_is_kept_for_the_next_request() -> None:
    world = World(conditions=Conditions(latency=0.1))
    site = Site(PAGES)
    world.serve(site)
    selector, sock = requested(world, b"GET /robots.txt HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n")
    first = read_answer(selector, sock)
    assert first.startswith(b"HTTP/1.1 200 OK\r\n") and b"Connection: keep-alive" in first
    with pytest.raises(BlockingIOError):
        sock.recv(100)  # No end: the connection stays open.
    sock.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n")
    assert read_answer(selector, sock).startswith(b"HTTP/1.1 200 OK\r\n")
    assert world.time() == pytest.approx(0.2) and site.counters.requests == {
        "/robots.txt": 1,
        "/": 1,
    }
    # Left idle, the server closes it after KEEP_ALIVE seconds, as aiohttp's does.
    assert read_answer(selector, sock) == b"" and world.time() == pytest.approx(0.2 + KEEP_ALIVE)


@pytest.mark.parametrize(
    ("request_line", "kept"),
    [
        (b"GET / HTTP/1.1\r\nConnection: close", False),
        (b"GET / HTTP/1.0", False),
        (b"GET / HTTP/1.0\r\nConnection: Keep-Alive", True),
        (b"GET / HTTP/1.1\r\nConnection: TE, close", False),
    ],
)
def test_a_request_says_whether_its_connection_is_kept(request_line: bytes, kept: bool) -> None:
    assert keeps_alive(request_line + b"\r\nHost: x") is kept


def test_a_closed_client_leaves_nothing_to_wait_for() -> None:
    world = World()
    world.serve(Site(PAGES))
    selector, sock = requested(world, b"GET / HTTP/1.1\r\n\r\n")
    read_answer(selector, sock)
    sock.close()  # The server's idle timer is for a socket nobody reads: dropped.
    assert world.network.next_time() is None


def test_the_network_notes_what_each_server_heard() -> None:
    world = World(conditions=Conditions(latency=0.25, loss=1.0))
    world.serve(Site(PAGES))
    selector, sock = requested(world, b"GET /a HTTP/1.0\r\n\r\n")
    other_selector, other = requested(world, b"GET /b HTTP/1.0\r\n\r\n")
    assert dict(world.network.in_hand) == {"127.0.0.1:8000": 2}
    world.network.run_until(1.0)
    heard = [
        (one.time, one.server, one.target, one.fate, one.answered) for one in world.network.heard
    ]
    assert heard == [
        (0.0, "127.0.0.1:8000", "/a", "lost", 0.25),
        (0.0, "127.0.0.1:8000", "/b", "lost", 0.25),
    ]
    assert world.network.most_in_hand == {"127.0.0.1:8000": 2}
    assert world.network.in_hand == {"127.0.0.1:8000": 0}


def test_seed_0_hears_of_the_network_on_time_and_other_seeds_late() -> None:
    def heard_at(seed: int) -> float:
        world = World(seed, Conditions(latency=0.2), lateness=0.1)
        world.serve(Site(PAGES))
        selector, _ = requested(world, b"GET / HTTP/1.0\r\n\r\n")
        selector.select(None)
        return world.time()

    assert heard_at(0) == 0.2
    late = [heard_at(seed) for seed in range(1, 11)]
    assert all(0.2 <= when < 0.3 for when in late) and len(set(late)) > 1
    assert late == [heard_at(seed) for seed in range(1, 11)]  # The same seed, the same.


def test_a_late_wake_up_never_passes_the_timer() -> None:
    times = []
    for seed in range(1, 30):
        world = World(seed, Conditions(latency=0.2), lateness=1.0)
        world.serve(Site(PAGES))
        selector, _ = requested(world, b"GET / HTTP/1.0\r\n\r\n")
        assert len(selector.select(0.5)) == 1
        times.append(world.time())
    # Late up to a second, but heard by the timer's 0.5 s: on time if late would pass it.
    assert all(0.2 <= when < 0.5 for when in times) and 0.2 in times and max(times) > 0.2


def test_the_world_has_a_wall_clock_of_its_own() -> None:
    world = World(conditions=Conditions(latency=1.5))
    world.serve(Site(PAGES))
    requested(world, b"GET / HTTP/1.0\r\n\r\n")[0].select(None)
    assert world.wall_time() == EPOCH + 1.5
    assert time.gmtime(EPOCH)[:6] == (2026, 1, 1, 0, 0, 0)


def test_conditions_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="loss"):
        Conditions(loss=1.5)
    with pytest.raises(ValueError, match="latency"):
        Conditions(latency=-1)
    with pytest.raises(ValueError, match="add up"):
        Conditions(loss=0.6, reset=0.6)
    with pytest.raises(ValueError, match="seed"):
        World(-1)
    with pytest.raises(ValueError, match="lateness"):
        World(1, lateness=-0.1)


# --- Whole crawls ---------------------------------------------------------------


def test_a_simulated_crawl_records_what_the_site_expects(stage: ModuleType, tmp_path: Path) -> None:
    world = World(conditions=Conditions(latency=0.2))
    trace = tmp_path / "trace.json"
    crawler, root = simulated_crawl(stage, world, max_tasks=10, trace=str(trace))
    expected = expected_results(root, PAGES)
    assert {(stat.url, stat.status, stat.next_url) for stat in crawler.done} == expected
    assert len(crawler.done) == len(expected)
    # Every fetch waited 0.2 virtual seconds; ten at once took several rounds.
    assert world.time() >= 0.2 * len(expected) / 10
    # The trace is in virtual time too: the root's fetch took exactly 0.2 s.
    events = json.loads(trace.read_text())["traceEvents"]
    first = [event for event in events if event.get("cat") == "fetch" and event["name"] == "/"]
    assert [(event["ts"], event["dur"]) for event in first] == [(0, 200_000)]


@pytest.mark.parametrize("seed", [0, 5])
def test_the_same_seed_gives_the_same_run_byte_for_byte(
    stage: ModuleType, seed: int, tmp_path: Path
) -> None:
    conditions = Conditions(latency=0.2, jitter=0.5, reset=0.1)
    runs = []
    for name in ("first", "second"):
        trace = tmp_path / f"{name}.json"
        crawler, _ = simulated_crawl(stage, World(seed, conditions), trace=str(trace))
        runs.append((jsonl(crawler), trace.read_bytes()))
    assert runs[0] == runs[1]


def test_seeds_give_other_orders_with_the_same_records(stage: ModuleType) -> None:
    conditions = Conditions(latency=0.2, jitter=0.5)
    crawls = [simulated_crawl(stage, World(seed, conditions))[0] for seed in (1, 2, 3)]
    orders = {tuple(stat.url for stat in crawler.done) for crawler in crawls}
    assert len(orders) > 1
    # Which page found a link first changes with the order; what is recorded does not.
    records = {frozenset((s.url, s.status, s.next_url) for s in c.done) for c in crawls}
    assert len(records) == 1


def test_a_lost_answer_times_out_in_virtual_time(stage: ModuleType) -> None:
    world = World(conditions=Conditions(loss=1.0))
    crawler, root = simulated_crawl(stage, world, timeout=30.0, max_tries=2)
    stat = crawler.done[0]
    assert isinstance(stat.exception, TimeoutError)
    assert world.time() == pytest.approx(2 * 30.0)  # Two tries of 30 s each.


def test_only_stage_3_keeps_its_connections_for_more_requests(stage: ModuleType) -> None:
    world = World(conditions=Conditions(latency=0.2))
    simulated_crawl(stage, world, max_tasks=3)
    connections = next(world.network.descriptors) - FIRST_FD
    requests = len(world.network.heard)
    if stage.__name__ == "stage3_asyncio":  # aiohttp keeps them: HTTP/1.1.
        assert connections <= 3 < requests
    else:  # HTTP/1.0 with Connection: close, a connection per request.
        assert connections == requests


def test_a_limited_bandwidth_spreads_the_answer_over_time() -> None:
    world = World(conditions=Conditions(latency=0.1, bandwidth=100))
    world.serve(Site(PAGES))
    selector, sock = requested(world, b"GET /robots.txt HTTP/1.0\r\n\r\n")
    pieces = []
    while not pieces or pieces[-1]:
        selector.select(None)
        pieces.append(sock.recv(1 << 20))
    answer = b"".join(pieces)
    assert len(pieces) > 2  # In a second's worth of bytes at a time, not at once.
    assert world.time() == pytest.approx(0.1 + len(answer) / 100)


def test_a_backoff_draws_its_jitter_from_the_seed(stage: ModuleType) -> None:
    def run(seed: int) -> list[float]:
        world = World(seed)
        site = Answers()
        site.routes["/"] = busy_then_ok([None, None, None])
        root = world.serve(site)  # type: ignore[arg-type]
        crawler = stage.Crawler([root], max_tries=4)
        times: list[float] = []
        crawler.on_request = lambda url, now: times.append(now)
        crawler.simulate(world)
        stage.run(crawler)
        assert crawler.waits == {"backoff": 3}
        return times

    assert run(3) == run(3)
    assert run(3) != run(4)  # Each wait has its jitter: another seed, other waits.


# --- Servers of scripts: bytes, pauses, resets and silence, in virtual time ----------


def ask(world: World, target: str) -> tuple[Any, selectors.BaseSelector]:
    """Connect to the world's server, send a GET of ``target``; return the socket and selector."""
    selector, sock = requested(world, f"GET {target} HTTP/1.0\r\n\r\n".encode())
    return sock, selector


def test_a_script_plays_its_steps_at_their_times() -> None:
    world = World()
    steps: list[Step] = [b"ab", Pause(2.0), b"cd"]
    server = Scripted({"/slow": lambda: steps}, lambda: [b"none"], bandwidth=1.0)
    world.serve(server)
    sock, selector = ask(world, "/slow")
    heard = []
    while not heard or heard[-1][1]:
        selector.select(None)
        heard.append((world.time(), sock.recv(100)))
    # "ab" at once; 2 s to go out at a byte a second, then the 2 s pause; then "cd" alike.
    assert heard == [(0.0, b"ab"), (4.0, b"cd"), (6.0, b"")]
    assert server.connections == {"/slow": 1}
    other, selector = ask(world, "/elsewhere")
    selector.select(None)
    assert other.recv(100) == b"none" and server.connections["/elsewhere"] == 1


def test_a_reset_step_raises_when_read_and_silence_never_ends() -> None:
    world = World()
    world.serve(Scripted({"/reset": lambda: [b"x", RESET]}, lambda: [SILENCE]))
    sock, selector = ask(world, "/reset")
    selector.select(None)
    assert sock.recv(100) == b"x"
    selector.select(None)
    with pytest.raises(ConnectionResetError):
        sock.recv(100)
    quiet, selector = ask(world, "/silent")
    assert selector.select(30.0) == [] and world.time() == pytest.approx(30.0)
    assert world.network.next_time() is None  # Nothing on its way, ever.


def test_an_endless_script_stops_once_the_client_closes() -> None:
    played = 0

    def endless() -> Any:
        nonlocal played
        while True:
            played += 1
            yield b"x" * 1000

    world = World()
    world.serve(Scripted({"/endless": endless}, lambda: []))
    sock, selector = ask(world, "/endless")
    for _ in range(3):
        selector.select(None)
        assert sock.recv(1 << 20) == b"x" * 1000
    sock.close()
    world.network.run_until(3600.0)  # An hour later, nothing more was played.
    assert played == 3 and world.network.next_time() is None


def test_a_step_that_is_none_of_the_four_is_refused() -> None:
    world = World()
    world.serve(Scripted({}, lambda: [12]))  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not a step of a script: 12"):
        ask(world, "/")
        world.network.run_until(1.0)
