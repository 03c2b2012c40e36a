"""An mkdocs hook that puts a replay of a run of stage 2 into a page.

A line ``<!-- replay: generators -->`` becomes the replay player
(``docs/javascripts/replay.js``) fed by a journal
(``shared/record/journal.py``) of stage 2 crawling a small test site:
``PAGES`` pages of a site of ``SITE_PAGES``, with three workers, obeying
robots.txt: the first worker to start fetches it in a task of its own,
the others wait for it, and a disallowed page is skipped.  The build records the crawl once
and writes the journal into the built site (``replay/generators.json``)
after the build, as the timelines are: nothing the build makes is kept in
the repository, and both languages replay the very same run.  Only the
pages that hold a player load its script and style sheet.

The crawl runs in a simulated world (``shared/sim``, seed 0): the test
site is served on an in-memory network, each answer takes ``LATENCY``
seconds of virtual time, and stage 2's loop reads the world's clock and
waits on its selector.  So every build records the same run, turn for
turn, and a reader who opens the page twice steps through the same steps.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from shared.record.journal import Journal, save
from shared.sim import Conditions, World
from shared.testsite.site import Site
from stage2_generators.crawler import Crawler
from stage2_generators.loop import EventLoop

MARKER = re.compile(r"^<!-- replay: (?P<name>generators) -->[ \t]*$", re.MULTILINE)
PLAYER = '<div class="replay"'
SITE_PAGES = 12
PAGES = 6  # The crawl stops after six: a run a reader can step through, little repeated.
WORKERS = 3
LATENCY = 0.02  # Seconds per answer: the workers wait, and select() has something to say.
JOURNALS = "replay_journals"  # The config key of the journals recorded by this build.
FOLDER = "replay"  # In the built site.
ABOUT = {  # Said above the player: what the run it replays is.
    "en": f"A run of stage 2 in the simulated world (seed 0, {LATENCY * 1000:.0f} ms an answer): "
    f"{WORKERS} workers crawl a test site of {SITE_PAGES} pages, robots.txt first, and stop "
    f"after {PAGES} pages.",
    "zh": f"第二阶段在模拟世界里的一次运行（种子 0，每个应答 {LATENCY * 1000:.0f} 毫秒）："
    f"{WORKERS} 个工作任务爬一个 {SITE_PAGES} 页的测试站点，先取 robots.txt，爬满 {PAGES} 页就停。",
}
NO_SCRIPT = {
    "en": "The replay needs JavaScript.",
    "zh": "回放需要 JavaScript。",
}


def record(world: World, url: str) -> dict[str, Any]:
    """Crawl ``url`` with stage 2 in ``world`` and return the journal of its loop."""
    crawler = Crawler([url], max_tasks=WORKERS, max_pages=PAGES, obey_robots=True)
    crawler.simulate(world)
    journal = Journal(f"stage2_generators: {PAGES} pages, {WORKERS} workers, robots.txt obeyed")
    journal.watch_queue(crawler.q)
    loop = EventLoop(journal=journal, **world.loop_options())
    try:
        loop.run_until_complete(crawler.crawl())
    finally:
        loop.close()
    return journal.data()


def journal_of(name: str, config: dict) -> dict[str, Any]:
    """Return the journal of the named run, recording it once per build."""
    journals: dict[str, dict[str, Any]] = config.setdefault(JOURNALS, {})
    if name not in journals:
        world = World(0, Conditions(latency=LATENCY))
        journals[name] = record(world, world.serve(Site(SITE_PAGES)))
    return journals[name]


def player(match: re.Match[str], page: Any, config: dict) -> str:
    """Return the HTML of a player for the named run, recording it if need be."""
    name = match["name"]
    journal_of(name, config)
    lang = "zh" if page.file.src_uri.endswith(".zh.md") else "en"
    src = "../" * page.url.count("/") + f"{FOLDER}/{name}.json"
    return (
        f'<p class="replay-about">{ABOUT[lang]}</p>\n'
        f'<div class="replay" data-journal="{src}" lang="{lang}"><p>{NO_SCRIPT[lang]}</p></div>'
    )


def on_page_markdown(markdown: str, page: Any, config: dict, **kwargs: object) -> str:
    """Replace each replay marker with a player."""
    return MARKER.sub(lambda match: player(match, page, config), markdown)


def on_post_page(output: str, page: Any, config: dict) -> str:
    """Give a page that holds a player the player's script and style sheet."""
    if PLAYER not in output:
        return output
    root = "../" * page.url.count("/")
    style = f'<link rel="stylesheet" href="{root}stylesheets/replay.css">\n'
    script = f'<script src="{root}javascripts/replay.js"></script>\n'
    output = output.replace("</head>", style + "</head>", 1)
    return output.replace("</body>", script + "</body>", 1)


def on_post_build(config: dict, **kwargs: object) -> None:
    """Write the journals this build recorded into the built site."""
    folder = Path(config["site_dir"]) / FOLDER
    for name, journal in config.get(JOURNALS, {}).items():
        folder.mkdir(parents=True, exist_ok=True)
        save(journal, folder / f"{name}.json")
