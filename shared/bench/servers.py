"""The servers scenario: stage 2's HTTP server beside aiohttp.web.

Both serve the same test site (``shared.testsite.site.Site``) from a process of
their own, without the benchmark's response cache, so every request builds
its page; the server chapter's step 6 (llhttp) is measured beside them for
requests per second only.  It is a run of its own (``python -m shared.bench
--only servers --out docs/bench/servers``), shown in the server chapter.
Two figures:

* requests per second on one content page, the servers taking turns run
  after run (median of the runs): ``ab`` with a new connection per request;
  ``ab -k``, whose keep-alive is HTTP/1.0's (``Connection: keep-alive``),
  which a server may refuse: ab's count of the requests that did go on a
  kept connection is noted beside; and ``wrk``, which speaks HTTP/1.1,
  where keeping the connection is the default, for a fixed time;
* memory per idle connection: the server's RSS before and after
  ``idle_connections`` clients have each connected, made one keep-alive
  request and gone quiet; then every client asks once more, which counts the
  connections the server still held.

The whole machine's load is noted beside each figure: other processes
share its cores.
"""

from __future__ import annotations

import http.client
import os
import re
import resource
import time
from typing import Any

from shared.bench import others
from shared.bench.procs import Server, busy_seconds, timed_run
from shared.bench.run_one import proc_status

SERVERS = ("aiohttp", "generators")
# The server chapter's step 6 (llhttp parses, no timer and no limits): measured
# beside the finished server, for what the parser alone costs; not idle memory.
RATE_SERVERS = (*SERVERS, "llhttp")
PAGE = "/pages/1/"
Log = Any  # Callable[[str], None]


def start(server: str, idle_timeout: float = 60.0) -> Server:
    """Start ``server`` serving a 300-page site in a subprocess."""
    return Server("shared.bench.serve", "--server", server, "--pages", "300",
                  "--idle-timeout", str(idle_timeout))  # fmt: skip


def ab_rate(server: Server, requests: int, concurrency: int, keep_alive: bool) -> dict[str, Any]:
    """Run ``ab`` against ``server``; return requests/s, failures and the machine's load."""
    command = others.ab_command(server.root + PAGE.lstrip("/"), requests, concurrency, keep_alive)
    done = timed_run(command, 600, server=server)
    rate = re.search(r"Requests per second:\s+([\d.]+)", done["stdout"])
    failed = re.search(r"Failed requests:\s+(\d+)", done["stdout"])
    kept = re.search(r"Keep-Alive requests:\s+(\d+)", done["stdout"])  # Only with -k.
    return {
        "per_second": float(rate.group(1)) if rate else None,
        "failed": int(failed.group(1)) if failed else None,
        "kept": int(kept.group(1)) if kept else None,
        "server_cpu": done["server_cpu"], "ab_cpu": done["cpu"], "others": done["others"],
        "wall": done["wall"], "error": None if rate else done["stderr"][-400:],
    }  # fmt: skip


def wrk_rate(server: Server, seconds: int, connections: int) -> dict[str, Any]:
    """Run ``wrk`` (HTTP/1.1 keep-alive) against ``server``; return requests/s and more."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", server.root + PAGE.lstrip("/")]
    done = timed_run(command, seconds + 60, server=server)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", done["stdout"])
    total = re.search(r"(\d+) requests in", done["stdout"])
    errors = re.search(r"Socket errors: (.*)", done["stdout"])
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", done["stdout"])
    return {
        "per_second": float(rate.group(1)) if rate else None,
        "requests": int(total.group(1)) if total else None,
        "socket_errors": errors.group(1) if errors else None,
        "non_2xx": int(non_2xx.group(1)) if non_2xx else 0,
        "server_cpu": done["server_cpu"], "others": done["others"], "wall": done["wall"],
        "error": None if rate else done["stderr"][-400:],
    }  # fmt: skip


def rates(config: Any, log: Log) -> dict[str, Any]:
    """Measure every server with ``ab`` and ``wrk``, taking turns, ``config.runs`` times."""
    requests, concurrency = config.server_requests, config.server_concurrency
    figures: dict[str, dict[str, list[dict[str, Any]]]] = {
        s: {"new": [], "keep_alive": [], "wrk": []} for s in RATE_SERVERS
    }
    for run in range(config.runs):
        order = RATE_SERVERS if run % 2 == 0 else RATE_SERVERS[::-1]
        for name in order:
            with start(name) as server:
                ab_rate(server, min(requests, 1000), concurrency, False)  # Warm-up.
                new = ab_rate(server, requests, concurrency, False)
                kept = ab_rate(server, config.server_keep_alive_requests, concurrency, True)
                wrk = wrk_rate(server, config.server_wrk_seconds, concurrency)
            figures[name]["new"].append(new)
            figures[name]["keep_alive"].append(kept)
            figures[name]["wrk"].append(wrk)
            log(f"servers run {run + 1}/{config.runs} {name}: new {new['per_second']}/s, "
                f"ab -k {kept['per_second']}/s ({kept['kept']} kept), "
                f"wrk {wrk['per_second']}/s, others {new['others']:.2f} cores")  # fmt: skip
    return figures


def idle_memory(server_name: str, connections: int, log: Log) -> dict[str, Any]:
    """Hold ``connections`` idle keep-alive connections; return RSS per connection and more."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    clients: list[http.client.HTTPConnection] = []
    with start(server_name, idle_timeout=600) as server:
        get(server, clients)  # Warm-up: the page and the code paths are loaded.
        rss_before = proc_status(server.proc.pid)["VmRSS"]
        start_time, busy0 = time.perf_counter(), busy_seconds()
        try:
            while len(clients) < connections:
                get(server, clients)
            rss_held = proc_status(server.proc.pid)["VmRSS"]
            held = sum(answers_again(client) for client in clients)
        finally:
            for client in clients:
                client.close()
        wall = time.perf_counter() - start_time
    result = {
        "connections": connections, "held": held, "rss_before_kb": rss_before,
        "rss_held_kb": rss_held, "kb_per_connection": (rss_held - rss_before) / connections,
        "load_average": os.getloadavg()[0], "machine_busy_cores": (busy_seconds() - busy0) / wall,
    }  # fmt: skip
    log(f"servers idle {server_name}: {result}")
    return result


def get(server: Server, clients: list[http.client.HTTPConnection]) -> None:
    """Open one more keep-alive connection, ask for the page and keep it open."""
    client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    client.request("GET", PAGE)
    client.getresponse().read()
    clients.append(client)


def answers_again(client: http.client.HTTPConnection) -> bool:
    """Tell whether the connection, idle until now, still answers on the same socket."""
    sock = client.sock
    try:
        client.request("GET", PAGE)
        ok = client.getresponse().read() != b""
    except (OSError, http.client.HTTPException):
        return False
    return ok and client.sock is sock


def measure(config: Any, log: Log) -> dict[str, Any]:
    """Run the scenario with the sizes of ``config`` and return its figures."""
    if not others.have("ab") or not others.have("wrk"):
        return {"error": "ab or wrk is not installed (apt-get install apache2-utils wrk)"}
    figures = rates(config, log)
    idle = {name: idle_memory(name, config.idle_connections, log) for name in SERVERS}
    return {
        "requests": config.server_requests,
        "keep_alive_requests": config.server_keep_alive_requests,
        "wrk_seconds": config.server_wrk_seconds,
        "concurrency": config.server_concurrency,
        "runs": figures,
        "idle": idle,
    }
