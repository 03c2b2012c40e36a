"""Tests for the benchmark's parts (``shared.bench``); the benchmark itself never runs here.

Nothing here is timed: these check that the link graph matches the site's
oracle, that the simulated ideal crawler and the thread-pool crawler crawl
correctly, that the servers and the report work, on tiny inputs.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shared.bench import __main__ as bench_main
from shared.bench import (
    floor_aiohttp,
    floor_selectors,
    instructions,
    others,
    procs,
    report,
    scale,
    scale_one,
    servers,
    threads,
)
from shared.bench.procs import ROOT as REPO
from shared.bench.scenarios import held_crawl, rotated
from shared.bench.serve import make_bench_app
from shared.bench.simulate import depth, simulate
from shared.bench.sitegraph import Node, link_graph
from shared.testsite.server import COUNTERS, ServerThread, make_app
from shared.testsite.site import expected_results

ROOT = "http://127.0.0.1:8000/"


def triples(crawler: Any) -> set[tuple[str, int | None, str | None]]:
    return {(stat.url, stat.status, stat.next_url) for stat in crawler.done}


# --- The link graph and the simulation ------------------------------------------------


@pytest.mark.parametrize("pages", [10, 300])
def test_link_graph_matches_the_oracle(pages: int) -> None:
    graph = link_graph(ROOT, pages)
    found = {(url, node.status, node.next_url) for url, node in graph.items()}
    assert found == expected_results(ROOT, pages)


def test_link_graph_lists_allowed_links_and_redirect_targets() -> None:
    graph = link_graph(ROOT, 300)
    assert graph[ROOT + "pages/5"] == Node(301, ROOT + "pages/5/", (ROOT + "pages/5/",))
    assert graph[ROOT + "redirect/offsite"].links == ()  # Off-site: not followed.
    assert ROOT + "pages/6/" in graph[ROOT + "pages/5/"].links
    assert all(link.startswith(ROOT) for node in graph.values() for link in node.links)


@pytest.mark.parametrize("slots", [1, 7, 100, 10_000])
def test_simulated_crawl_fetches_the_oracle_urls_once(slots: int) -> None:
    graph = link_graph(ROOT, 300)
    run = simulate(graph, ROOT, slots, latency=0.1, seed=slots)
    assert sorted(run.fetched) == sorted({url for url, _, _ in expected_results(ROOT, 300)})
    assert run.max_in_flight <= slots


def chain_and_fan() -> dict[str, Node]:
    """A root linking to a chain a -> b -> c and to four leaves."""
    leaves = tuple(f"leaf{k}" for k in range(4))
    graph = {"root": Node(200, None, ("a", *leaves)), "a": Node(200, None, ("b",)),
             "b": Node(200, None, ("c",)), "c": Node(200, None, ("root",))}  # fmt: skip
    graph.update({leaf: Node(200, None, ()) for leaf in leaves})
    return graph


def test_simulation_with_one_slot_is_sequential() -> None:
    assert simulate(chain_and_fan(), "root", 1, 1.0).makespan == 8.0


def test_simulation_with_many_slots_follows_the_longest_path() -> None:
    graph = chain_and_fan()
    assert depth(graph, "root") == 4
    assert simulate(graph, "root", 100, 1.0).makespan == 4.0


def test_simulation_is_work_conserving() -> None:
    # Two slots: root; a + leaf0; b + leaf1; c + leaf2; leaf3.  Five rounds.
    run = simulate(chain_and_fan(), "root", 2, 1.0)
    assert run.makespan == 5.0
    assert run.fetched[:3] == ["root", "a", "leaf0"]


def test_simulation_rejects_no_slots() -> None:
    with pytest.raises(ValueError):
        simulate(chain_and_fan(), "root", 0, 1.0)
    with pytest.raises(ValueError):
        simulate(chain_and_fan(), "root", 1, 1.0, cpu=-1.0)


def test_simulated_cpu_adds_up_on_one_slot() -> None:
    assert simulate(chain_and_fan(), "root", 1, 1.0, cpu=0.5).makespan == 12.0  # 8 × 1.5


def test_the_server_s_cpu_is_paid_on_a_core_of_its_own() -> None:
    # Root answered at 1.5; a and the four leaves wait out the latency at 2.5
    # and take the server's core in turn (a at 3.0, the leaves until 5.0); b,
    # sent at 3.0, waits for that core until 5.0, answered at 5.5; c at 7.0.
    assert simulate(chain_and_fan(), "root", 100, 1.0, server_cpu=0.5).makespan == 7.0
    assert simulate(chain_and_fan(), "root", 1, 1.0, cpu=0.5, server_cpu=0.5).makespan == 16.0
    with pytest.raises(ValueError):
        simulate(chain_and_fan(), "root", 1, 1.0, server_cpu=-1.0)


def test_simulated_cpu_runs_one_page_at_a_time() -> None:
    # Root parsed at 1.5; a and the four leaves arrive at 2.5 and queue for
    # the one core (a at 3.0, the leaves until 5.0); b, started at 3.0,
    # arrives at 4.0 but waits for the core until 5.0, parsed at 5.5; c ends at 7.0.
    assert simulate(chain_and_fan(), "root", 100, 1.0, cpu=0.5).makespan == 7.0
    # With no latency the crawl is all CPU: eight pages, one second each.
    assert simulate(chain_and_fan(), "root", 100, 0.0, cpu=1.0).makespan == 8.0


# --- The thread-pool crawler ------------------------------------------------------------


def test_thread_crawler_matches_the_oracle_within_max_tasks() -> None:
    with ServerThread(make_app(300)) as server:
        crawler = threads.crawl([server.url], max_tasks=8)
        counters = server.app[COUNTERS]
        assert triples(crawler) == expected_results(server.url, 300)
        assert len(crawler.done) == len(crawler.seen_urls)
        assert crawler.threads_started == 8
        assert counters.max_in_flight <= 8
        assert crawler.t1 is not None and crawler.t0 <= crawler.t1


def test_thread_crawler_retries_then_records_a_failure() -> None:
    crawler = threads.crawl(["http://127.0.0.1:9/"], max_tries=2, timeout=2.0)
    (stat,) = crawler.done
    assert stat.status is None and isinstance(stat.exception, OSError)


# --- The floors: bare loops the stages' instruction counts are held against -----------------


@pytest.mark.parametrize("floor", [floor_selectors, floor_aiohttp])
def test_a_floor_crawls_the_whole_site_with_max_tasks_at_once(floor: Any) -> None:
    with ServerThread(make_app(50, latency=0.02)) as server:  # Latency: requests overlap.
        crawler = floor.run(floor.Crawler([server.url], max_tasks=7))
        assert triples(crawler) == expected_results(server.url, 50)
        assert len(crawler.done) == len(crawler.seen_urls)
        assert 1 < server.app[COUNTERS].max_in_flight <= 7


# --- The servers ------------------------------------------------------------------------


def test_cached_site_answers_as_the_site_does_and_counts_every_request() -> None:
    with ServerThread(make_bench_app(50, 0.0, cache=True)) as server:
        for _ in range(2):  # The second crawl is answered from the cache.
            with urllib.request.urlopen(server.url + "_bench/reset") as answer:
                assert json.load(answer) == {}
            crawler = threads.crawl([server.url], max_tasks=4)
            assert triples(crawler) == expected_results(server.url, 50)
            with urllib.request.urlopen(server.url + "_bench/stats") as answer:
                stats = json.load(answer)
            assert stats["requests"] == len(crawler.done)
            assert 1 <= stats["max_in_flight"] <= 4


@pytest.mark.slow
def test_slow_server_holds_every_fetch_then_answers() -> None:
    result = held_crawl("threads", 5)
    assert result["held"] == result["most_held"] == 5
    assert result["complete"] and result["urls"] == 6 and result["retries"] == 0
    assert result["threads_started"] == 5


def test_raw_load_client() -> None:
    with ServerThread(make_app(10)) as server:
        result = others.raw_load(server.url + "pages/1/", requests=20, concurrency=5)
    assert result["failed"] == 0 and result["per_second"] > 0


def test_command_lines() -> None:
    assert others.ab_command("http://h/", 10, 2, keep_alive=True)[:3] == ["ab", "-q", "-k"]
    assert "-X" in others.wget_command("http://h/", "/tmp/x")
    assert rotated(["a", "b", "c"], 1) == ["b", "c", "a"]


# --- The report ---------------------------------------------------------------------------


def fake_results() -> dict:
    def crawl(speed: float) -> dict:
        return {"wall": 10_000 / speed, "pages_per_s": speed, "requests": 10_000,
                "crawler_cpu": 1.0, "server_cpu": 1.0, "correct": True, "others": 0.0}  # fmt: skip

    def held(kb: float) -> dict:
        return {"held": 10, "kb_per_fetch": kb, "rss_before_kb": 1000, "rss_held_kb": 1100,
                "seconds_to_hold_all": 1.0, "seconds_after_release": 1.0, "complete": True,
                "retries": 0}  # fmt: skip

    return {
        "quick": False, "runs": 2, "machine": {"date": "today", "commit": "abc"},
        "throughput": {
            "pages": 10, "urls": 10_000, "max_tasks": 100,
            "runs": {"stage1": [crawl(1500)] * 2, "threads": [crawl(1000)] * 2,
                     "scrapy": [crawl(100)] * 2},
            "ceilings": [{"tool": "ab", "new_connections": 4000.0}] * 2,
        },
        "concurrency": {
            "pages": 10, "urls": 20, "latency": 0.1, "lower_bound": 0.5,
            "ideal": {10: {"median": 1.0}},
            "runs": {"stage1": {10: [{"wall": 1.05, "ratio": 1.05, "max_in_flight": 10}]},
                     "threads": {10: [{"wall": 1.2, "ratio": 1.2, "max_in_flight": 10}]}},
        },
        "memory": {"sizes": [10], "c10k": 10,
                   "runs": {"stage1": {10: [held(2.0)]}, "threads": {10: [held(20.0)]}}},
    }  # fmt: skip


def test_report_verdicts() -> None:
    results = fake_results()
    rows = {target: (measured, verdict) for target, measured, verdict in
            report.throughput_targets(results["throughput"])}  # fmt: skip
    assert rows["stage 1 (callbacks) ≥ 1.4× threads"] == ("1.50×", "**met**")
    assert rows["stage 3 ≥ 12× Scrapy"][1] == "not measured"
    assert rows["stage 2 ≥ 50% of the server's new-connection ceiling"][1] == "not measured"
    (row,) = report.concurrency_targets(results["concurrency"])
    assert row[2] == "**met**"
    memory = report.memory_targets(results["memory"])
    assert memory[0][1:] == ("0.10×", "**met**")
    assert memory[-1][2] == "**met**"  # C10K


@pytest.mark.slow
def test_report_writes_summary_and_charts(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = report.write(fake_results(), tmp_path)
    text = path.read_text()
    assert "![Pages per second, by crawler](throughput.svg){ .chart }" in text
    zh = (tmp_path / "summary.zh.md").read_text()
    assert "![各爬虫每秒抓取的页面数](throughput.zh.svg){ .chart }" in zh
    # The summary is for readers: the verdicts and the machine's load go to targets.md.
    assert "### Targets" not in text and "verdict" not in text
    assert "### Targets" in (tmp_path / "targets.md").read_text()
    names = {"throughput", "concurrency", "memory"}
    assert {p.name for p in tmp_path.glob("*.svg")} == {
        f"{name}{lang}.svg" for name in names for lang in ("", ".zh")
    }
    for chart in tmp_path.glob("*.svg"):
        svg = chart.read_text()
        # Readable in both themes: no background of its own (the dark theme
        # inverts it), and its words are text, in the page's language.
        assert "<text" in svg and "fill: #ffffff" not in svg.lower()
        assert ("第一阶段" in svg) == chart.name.endswith(".zh.svg"), chart.name
    assert json.loads((tmp_path / "results.json").read_text())["runs"] == 2


def test_both_html_parsers_find_the_same_links() -> None:
    pytest.importorskip("selectolax")
    from shared.bench.parsers import sample_pages, standard_library_only
    from shared.web.links import extract_links

    pages = sample_pages(300)[:30]
    pages.append(("http://h/d/p", "<base href='/b/'><!-- <a href=c> --><a href=x><link href=y/>"))
    with standard_library_only():
        expected = [extract_links(text, url) for url, text in pages]
    assert [extract_links(text, url) for url, text in pages] == expected
    assert expected[-1] == {"http://h/b/x", "http://h/b/y/"}


def test_report_of_a_quick_run_has_c10k_without_threads() -> None:
    memory = fake_results()["memory"]
    held = memory["runs"]["stage1"][10][0]
    memory.update(c10k=20, c10k_runs={"stage1": [{**held, "held": 20}]})
    assert report.memory_targets(memory)[-1][0].startswith("C10K: stage 1 (callbacks) completes 20")
    assert report.memory_targets(memory)[-1][2] == "**met**"
    assert "| stage 1 (callbacks) | 20 |" in report.memory_table(memory)


# --- Where the report goes ------------------------------------------------------------


def test_a_quick_run_writes_to_a_scratch_directory() -> None:
    committed = REPO / "docs" / "bench"
    assert bench_main.output_directory(quick=False, out=None) == committed
    scratch = [bench_main.output_directory(quick=True, out=None) for _ in range(2)]
    try:
        for directory in scratch:
            assert directory.is_dir()
            assert not directory.resolve().is_relative_to(committed.resolve())
        assert scratch[0] != scratch[1]  # A new one each time.
    finally:
        for directory in scratch:
            directory.rmdir()


def test_docs_bench_keeps_only_a_run_on_a_quiet_machine() -> None:
    """Every run's "others" counts, wherever the scenario keeps it; 0.2 cores is too busy."""
    quiet = {"throughput": {"runs": {"stage1": [{"others": 0.01}, {"others": 0.19}]}}}
    busy = {**quiet, "servers": {"runs": {"new": [{"others": 0.05}, {"others": 0.2}]}}}
    assert sorted(procs.other_cpu(busy)) == [0.01, 0.05, 0.19, 0.2]
    assert procs.too_busy(quiet) == ""
    assert "up to 0.20 cores" in procs.too_busy(busy)
    assert "no run measured" in procs.too_busy({"parsers": {"selectolax": 1.0}})


def test_a_quick_run_refuses_to_overwrite_the_committed_results(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench_main.main(["--quick", "--out", str(REPO / "docs" / "bench")])
    assert exit_info.value.code == 2
    assert "--quick never writes docs/bench" in capsys.readouterr().err


# --- Stage 2's server beside aiohttp.web --------------------------------------------------


@pytest.mark.slow
def test_both_bench_servers_serve_the_site_and_its_stats() -> None:
    for name in servers.SERVERS:
        with servers.start(name) as server:
            assert server.get_json("_bench/reset") == {}
            with urllib.request.urlopen(server.root + "pages/1/") as answer:
                assert b"<title>Page 1</title>" in answer.read()
            assert server.get_json("_bench/stats")["requests"] == 1


@pytest.mark.slow
def test_idle_connections_are_counted_held_on_the_same_socket() -> None:
    result = servers.idle_memory("generators", 20, log=lambda message: None)
    assert (result["connections"], result["held"]) == (20, 20)
    assert result["rss_held_kb"] >= result["rss_before_kb"] > 0


def test_report_of_the_servers_scenario() -> None:
    def ab(rate: float) -> dict:
        return {"per_second": rate, "failed": 0, "others": 0.5}

    def idle(held: int) -> dict:
        return {"connections": 100, "held": held, "kb_per_connection": 3.0,
                "machine_busy_cores": 1.0}  # fmt: skip

    results = {
        "requests": 10, "keep_alive_requests": 20, "concurrency": 5,
        "runs": {"aiohttp": {"new": [ab(1000), ab(900)], "keep_alive": [ab(2000)] * 2},
                 "generators": {"new": [ab(600), ab(400)], "keep_alive": [ab(900)] * 2}},
        "idle": {"aiohttp": idle(100), "generators": idle(99)},
    }  # fmt: skip
    (rate, held) = report.servers_targets(results)
    assert rate[1:] == ("0.52×", "**met**")  # The median of 0.6 and 0.44.
    assert held[1:] == ("99 held", "**missed**")
    assert "| stage 2's server | 500 | 900 |" in report.servers_table(results)


def test_report_of_the_servers_scenario_with_wrk() -> None:
    def load(rate: float, kept: int | None = None) -> dict:
        return {"per_second": rate, "failed": 0, "others": 0.5, "kept": kept}

    def idle(held: int) -> dict:
        return {"connections": 100, "held": held, "kb_per_connection": 3.0,
                "machine_busy_cores": 1.0}  # fmt: skip

    def runs(new: float, kept: int, wrk: list[float]) -> dict:
        return {"new": [load(new)] * 2, "keep_alive": [load(new, kept)] * 2,
                "wrk": [load(rate) for rate in wrk]}  # fmt: skip

    results = {
        "requests": 10, "keep_alive_requests": 20, "wrk_seconds": 5, "concurrency": 5,
        "runs": {"aiohttp": runs(1000, 20, [2000, 1000]), "generators": runs(800, 0, [1000, 900]),
                 "llhttp": runs(1500, 20, [4000, 3000])},
        "idle": {"aiohttp": idle(100), "generators": idle(100)},
    }  # fmt: skip
    rows = {target: measured for target, measured, _ in report.servers_targets(results)}
    assert rows["stage 2's server ≥ 0.8× aiohttp.web's requests/s, keep-alive (wrk)"] == "0.70×"
    assert rows["step 6 (llhttp) ≥ 0.8× aiohttp.web's requests/s, keep-alive (wrk)"] == "2.50×"
    table = report.servers_table(results)
    # The table's ratio is the row's own: 950 / 1,500 and 3,500 / 1,500; the
    # targets above pair the runs (0.5 and 0.9, 2.0 and 3.0: medians 0.70, 2.50).
    assert "| stage 2's server | 800 | 800 | 0 of 20 | 950 | 0.63× |" in table
    assert "| step 6 (llhttp) | 1,500 | 1,500 | 20 of 20 | 3,500 | 2.33× | 0.50 |\n" in table
    # Idle connections in a table of their own: ten columns do not fit the page.
    busy, held = table.split("\n\n")
    assert all(line.count("|") == 8 for line in busy.splitlines())
    assert "| stage 2's server | 3.0 | 100 of 100 | 1.00 |" in held.splitlines()
    assert "llhttp" not in held  # Step 6 was not measured idle.
    assert "| 第 6 步（llhttp） | 1,500 | 1,500 | 20 / 20 |" in report.servers_table(results, "zh")


# --- The summary in Chinese -----------------------------------------------------------


def committed_results(path: str) -> dict[str, Any]:
    return bench_main.load(REPO / "docs" / "bench" / path / "results.json")


@pytest.mark.parametrize("path", ["", "servers"])
def test_the_committed_summaries_are_what_the_report_writes(path: str) -> None:
    """docs/bench holds a full run: its summaries are redrawn from its results.json."""
    results = committed_results(path)
    for lang, name in (("en", "summary.md"), ("zh", "summary.zh.md")):
        written = (REPO / "docs" / "bench" / path / name).read_text()
        shown = [n for n in report.CHARTS if report.chart_file(n, lang) in written]
        assert report.summary(results, shown, lang) == written, name


@pytest.mark.parametrize("path", ["", "servers"])
def test_the_chinese_summary_is_the_english_one_translated(path: str) -> None:
    from markdown.extensions.toc import slugify

    results = committed_results(path)
    english = report.summary(results, ["throughput.svg"], "en").splitlines()
    chinese = report.summary(results, ["throughput.svg"], "zh").splitlines()
    assert len(english) == len(chinese)  # Line for line: the same tables and charts.
    for en, zh in zip(english, chinese, strict=True):
        if en.startswith("### "):  # The same anchors, so links work in both languages.
            assert zh.endswith(f"{{ #{slugify(en[4:], '-')} }}"), zh
        if en.startswith("|"):
            assert en.count("|") == zh.count("|"), zh
        if en.startswith("| crawler ") or en.startswith("| server ") or en.startswith("| parser "):
            assert not any(word in zh for word in ("crawler", "server", "requests", "parser"))
    assert "![各爬虫每秒抓取的页面数](throughput.zh.svg){ .chart }" in chinese or path == "servers"


def test_the_full_run_leaves_the_servers_to_their_own_run() -> None:
    """Stage 2's server is measured into docs/bench/servers only, and shown once."""
    assert "servers" in bench_main.SCENARIOS and "servers" not in bench_main.FULL_RUN
    assert "servers" not in committed_results("")
    for name in ("summary.md", "summary.zh.md"):
        assert "aiohttp.web" not in (REPO / "docs" / "bench" / name).read_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_frontier_summary_shows_the_finding_and_its_targets_go_apart(lang: str) -> None:
    """The chapter's table says how busy each crawl kept a core; verdicts and load are apart."""
    from shared.bench import frontier

    folder = REPO / "docs" / "bench" / "frontier"
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    suffix = "" if lang == "en" else ".zh"
    note = "<!-- Written by `python -m shared.bench.frontier`; do not edit by hand. -->\n"
    summary = (folder / f"summary{suffix}.md").read_text(encoding="utf-8")
    targets = (folder / f"targets{suffix}.md").read_text(encoding="utf-8")
    assert summary == note + frontier.summary(results, lang)
    assert targets == note + frontier.targets(results, lang)
    words = frontier.WORDS[lang]
    verdicts, load = (words["met"], words["missed"]), words["load"].split("{")[0]
    for word in (*verdicts, load):
        assert word not in summary, f"{word!r} belongs with the targets, not in the summary"
    # Each target has its verdict, met or missed, whichever the run found.
    assert load in targets and any(verdict in targets for verdict in verdicts)
    assert f"**{frontier.cores(results['0']['memory']):.2f}**" in summary


def test_a_quick_run_says_so_in_both_languages() -> None:
    results = fake_results() | {"quick": True}
    assert "indicative only" in report.summary(results, [], "en")
    assert "仅供参考" in report.summary(results, [], "zh")
    with pytest.raises(ValueError, match="only"):
        report.summary(results, [], "fr")


def test_the_chinese_pages_include_the_chinese_summary(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "command_output", REPO / "docs" / "hooks" / "command_output.py"
    )
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    english = hook.include_if_present("docs/bench/summary.md", "measurements.md")
    chinese = hook.include_if_present("docs/bench/summary.md", "measurements.zh.md")
    assert "### Throughput" in english and "### 吞吐量 { #throughput }" in chinese
    missing = hook.include_if_present("docs/bench/none.md", "measurements.zh.md")
    assert "尚未测量" in missing and "docs/bench/none.zh.md" in missing


# --- Instructions per request (callgrind) -----------------------------------------------


def test_instructions_read_callgrinds_count_and_refuse_a_missing_one() -> None:
    stderr = "==41== Events    : Ir\n==41== Collected : 2137751273\n==41==\n==41== I   refs:"
    assert instructions.instructions(stderr) == 2_137_751_273
    with pytest.raises(ValueError, match="no count"):
        instructions.instructions("valgrind: command not found")


def test_instructions_per_request_leave_the_start_up_out() -> None:
    small = {"instructions": 1_000_000 + 250 * 700, "requests": 250}
    big = {"instructions": 1_000_000 + 850 * 700, "requests": 850}
    assert instructions.per_request(small, big) == 700
    with pytest.raises(ValueError, match="as many requests"):
        instructions.per_request(small, small)


def test_the_full_run_counts_every_stage_beside_its_floor() -> None:
    assert {"instructions", "scale"} <= set(bench_main.FULL_RUN)
    assert set(instructions.FLOORS) == set(report.STAGES)
    assert set(instructions.FLOORS.values()) | set(report.STAGES) <= set(instructions.COUNTED)


def fake_instructions() -> dict[str, Any]:
    def counted(n: int) -> dict[str, Any]:
        return {"small": {}, "big": {}, "per_request": n}

    counts = {"stage1": counted(450_000), "stage2": counted(600_000), "stage3": counted(700_000),
              "threads": counted(500_000), "floor-selectors": counted(400_000),
              "floor-aiohttp": counted(560_000)}  # fmt: skip
    return {"pages": [100, 400], "max_tasks": 100, "counts": counts}


def test_each_stage_s_instructions_are_held_against_its_floor() -> None:
    rows = report.instructions_targets(fake_instructions())
    assert [(measured, verdict) for _, measured, verdict in rows] == [
        ("1.12×", "**met**"),
        ("1.50×", "**missed**"),
        ("1.25×", "**met**"),
    ]
    assert rows[2][0] == (
        "stage 3 (asyncio) ≤ 1.25× the instructions per request of the bare aiohttp loop (floor)"
    )
    table = report.instructions_table(fake_instructions())
    assert "| stage 2 (generators) | 600,000 | bare selectors loop (floor) | 1.50× |" in table
    assert "| threads (blocking) | 500,000 | – | – |" in table
    zh = report.instructions_table(fake_instructions(), "zh")
    assert "| 第三阶段（asyncio） | 700,000 | 光秃秃的 aiohttp 循环（下限） | 1.25× |" in zh


def test_the_thread_crawler_is_no_target_of_stage_3() -> None:
    rows = [target for target, _, _ in report.throughput_targets(fake_results()["throughput"])]
    assert "stage 3 (asyncio) ≥ 1.4× threads" not in rows
    assert not any("thread crawler's CPU" in row for row in rows)


def fake_scale() -> dict[str, Any]:
    def crawl(pages: int, us: float, held: float) -> dict[str, Any]:
        return {"pages": pages, "urls": 2 * pages, "us_per_url": us, "bytes_per_url": held,
                "oracle_matched": True, "others": 0.0}  # fmt: skip

    runs = {
        "stage1": {10_000: [crawl(10_000, 150, 240)], 1_000_000: [crawl(10**6, 160, 180)]},
        "stage3": {10_000: [crawl(10_000, 400, 250)], 1_000_000: [crawl(10**6, 480, 320)]},
    }
    breakdown = {
        "bytes_per_url": {
            "the seen set's table": 40.0,
            "other": 20.0,
            "URL strings, each held once by the seen set": 90.0,
        }
    }
    return {"sizes": [10_000, 1_000_000], "runs": runs, "warm_up": 1_000,
            "breakdown_pages": 1_000_000, "breakdowns": {"stage1": breakdown,
                                                         "stage3": breakdown}}  # fmt: skip


def test_report_of_the_scale_scenario() -> None:
    rows = {target: (measured, verdict) for target, measured, verdict in
            report.scale_targets(fake_scale())}  # fmt: skip
    assert rows["stage 1 (callbacks): CPU per URL at 1,000,000 pages ≤ 1.15× at 10,000"] == (
        "1.07×", "**met**")  # fmt: skip
    assert rows["stage 3 (asyncio): CPU per URL at 1,000,000 pages ≤ 1.15× at 10,000"][1] == (
        "**missed**")  # fmt: skip
    assert rows["stage 3 (asyncio): memory per URL at 1,000,000 pages ≤ 300 bytes"] == (
        "320 bytes", "**missed**")  # fmt: skip
    table = report.scale_table(fake_scale())
    assert "| stage 1 (callbacks) | 1,000,000 | 2,000,000 | 160 | 1.07× | 180 | matched |" in table
    parts = report.breakdown_table(fake_scale()).splitlines()
    assert parts[2].startswith("| URL strings, each held once by the seen set | 90 | 90 |")
    assert parts[-3].startswith("| other |")  # The parts largest first, "other" last.
    assert parts[-2:] == ["| traced in all | 150 | 150 |", "| RSS, for comparison | 180 | 320 |"]
    counted = report.throughput_table(
        fake_results()["throughput"], "en", fake_instructions()["counts"]
    )
    assert "| requests | crawler CPU µs/request | crawler instructions/request |" in counted
    assert "| 10,000 | 100 | 450,000 | 100 |" in counted  # Stage 1's, beside its µs.
    assert "| – |" in counted.splitlines()[-1]  # Scrapy was not counted.
    results = fake_results() | {"scale": fake_scale(), "instructions": fake_instructions()}
    for lang in ("en", "zh"):  # Every word of the new sections has its Chinese.
        summary = report.summary(results, ["scale.svg"], lang)
        assert (report.chart_file("scale.svg", lang) in summary) and "1,000,000" in summary


def test_a_crawl_s_bytes_are_told_by_the_line_that_allocated_them() -> None:
    crawling = "/x/shared/crawl/crawling.py"
    assert scale_one.part_of(crawling, "        self.seen_urls.add(url)\n") == (
        "the seen set's table")  # fmt: skip
    assert scale_one.part_of(crawling, "        return url, max_redirect\n").startswith("queue")
    assert scale_one.part_of("/x/shared/web/urls.py", "return prefix + path").startswith("URL")
    assert scale_one.part_of("/x/shared/sim/network.py", "self.inbox = bytearray()") == "other"


@pytest.mark.slow  # Four crawls in this process, and one in a subprocess: a few seconds.
def test_scale_crawls_report_cpu_and_memory_per_url_and_what_holds_it(tmp_path: Path) -> None:
    crawled = scale_one.measure("callbacks", 20, str(tmp_path), warm_up=10)
    assert crawled["oracle_matched"] and crawled["urls"] == len(
        expected_results(ROOT, 20, 10, True)
    )
    assert crawled["us_per_url"] > 0 and crawled["rss_peak_kb"] >= crawled["rss_baseline_kb"]
    traced = scale_one.breakdown("asyncio", 30, str(tmp_path), warm_up=10)
    assert traced["matched"], traced
    assert traced["bytes_per_url"]["the seen set's table"] > 0
    assert "URL strings, each held once by the seen set" in traced["bytes_per_url"]
    failed = scale.scale_crawl("stage2", 5, 10)  # Below the site's ten pages.
    assert "error" in failed and "at least 10 pages" in failed["error"]


def test_the_frontier_s_capacity_comes_from_its_bytes_per_url() -> None:
    from shared.bench import frontier_memory

    measured = {"seen": 100.0, "records": 600.0, "log": 50.0, "queue": 40.0}
    rows = frontier_memory.capacity(measured)
    # Every URL seen, recorded and logged, half of them queued: 770 bytes each.
    assert [round(row["gb"] * 2**30 / row["urls"]) for row in rows] == [770] * 3
    assert [round(row["gb_without_records"] * 2**30 / row["urls"]) for row in rows] == [120] * 3
    assert [row["nodes"] for row in rows] == [1, 2, 15]  # 48 GB a node of 64.
    results = {"server": "9", "allocator": "libc", "pages": 10, "urls": 20,
               "bytes_per_url": measured, "capacity": rows}  # fmt: skip
    english = frontier_memory.summary(results).splitlines()
    chinese = frontier_memory.summary(results, "zh").splitlines()
    assert len(english) == len(chinese) and "| 10<sup>9</sup> | 717.1 GB | 15 |" in english[-3]
    assert [line.count("|") for line in english] == [line.count("|") for line in chinese]
