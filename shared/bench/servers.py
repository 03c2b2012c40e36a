"""The servers scenario: stage 2's HTTP server beside aiohttp.web.

Both serve the same test site (``shared.site.Site``) from a process of
their own, without the benchmark's response cache, so every request builds
its page.  Two figures:

* requests per second measured by ``ab`` on one content page, with a new
  connection per request and with keep-alive, the servers taking turns run
  after run (median of the runs);
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
    return {
        "per_second": float(rate.group(1)) if rate else None,
        "failed": int(failed.group(1)) if failed else None,
        "server_cpu": done["server_cpu"], "ab_cpu": done["cpu"], "others": done["others"],
        "wall": done["wall"], "error": None if rate else done["stderr"][-400:],
    }  # fmt: skip


def rates(requests: int, keep_alive_requests: int, concurrency: int, runs: int,
          log: Log) -> dict[str, Any]:  # fmt: skip
    """Measure both servers with ``ab``, taking turns, ``runs`` times."""
    figures: dict[str, dict[str, list[dict[str, Any]]]] = {
        s: {"new": [], "keep_alive": []} for s in SERVERS
    }
    for run in range(runs):
        order = SERVERS if run % 2 == 0 else SERVERS[::-1]
        for name in order:
            with start(name) as server:
                ab_rate(server, min(requests, 1000), concurrency, False)  # Warm-up.
                new = ab_rate(server, requests, concurrency, False)
                kept = ab_rate(server, keep_alive_requests, concurrency, True)
            figures[name]["new"].append(new)
            figures[name]["keep_alive"].append(kept)
            log(f"servers run {run + 1}/{runs} {name}: new {new['per_second']}/s, "
                f"keep-alive {kept['per_second']}/s, others {new['others']:.2f} cores")  # fmt: skip
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
    if not others.have("ab"):
        return {"error": "ab is not installed (apt-get install apache2-utils)"}
    figures = rates(config.server_requests, config.server_keep_alive_requests,
                    config.server_concurrency, config.runs, log)  # fmt: skip
    idle = {name: idle_memory(name, config.idle_connections, log) for name in SERVERS}
    return {
        "requests": config.server_requests,
        "keep_alive_requests": config.server_keep_alive_requests,
        "concurrency": config.server_concurrency,
        "runs": figures,
        "idle": idle,
    }
