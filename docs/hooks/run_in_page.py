"""An mkdocs hook that lets a reader run the steps of stages 1 and 2 in the page.

Each listing that includes a step module (``stage1_callbacks/steps/*.py``
or ``stage2_generators/steps/*.py``) with ``--8<--``, whole or in part (a
line range, ``FILE:26:47``, or a named section, ``FILE:future``), gets a
Run control that runs the whole step.  The hook learns which listings
those are from the page's Markdown, before it is rendered: a fence whose
body is one such include gets ``data-step="MODULE"`` (and
``data-step-part`` for a part) on its rendered block, through the
brace form of its fence (```` ``` { .python title=... data-step=... } ````),
which renders the same listing, its line numbers and highlights as
written.  In the rendered page, the block that gets the controls is the
listing of the whole step where the page shows it whole, and otherwise
the last of its parts: the step is a complete program only once the page
has shown all of it, and the page's own output of the step comes after
that.  One Run control per step per page.

A page may show a step only by what it prints: a console block that
docs/hooks/command_output.py wrote for ``<!-- output: python -m STEP -->``
(it runs first).  When the page lists no part of that step but lists
steps of the same stage, that block gets the step's Run control
(``data-part="output"``), and Edit opens the step's file in its place;
a step that needs threads gets its note there.  So every step a lesson
page runs can be run, or says why not.

That listing's container gets ``data-run="MODULE"`` (and ``data-part`` for a
part), a ``.run-button`` (and Edit, Reset) inside it, and a
``.run-output`` box right after the code; ``docs/javascripts/run.js`` does
the rest, in a Web Worker running ``docs/javascripts/run-worker.js``.
Edit opens the whole step file, part or not (``sources`` in the manifest):
the reader edits the real step, and Run runs the edit.

The generators chapter's ``>>>`` sessions run in the page too: each
```` ```pycon ```` block gets a Run button (``data-run="docs/generators.md:3"``
for the third), which runs the page's blocks before it silently, in one
namespace, then its own, as tests/test_docs.py's doctest runs them, and
shows what the prompt prints (``shared/page/session.py``).  The first
session of the page says so in a note.  The other pages' sessions talk
to real sockets or to a loop on ``selectors``, which the page lacks.

The site carries its own Python, copied in at build time, and fetches
nothing at run time: Pyodide (the npm registry's ``pyodide`` package,
version ``PYODIDE_VERSION``, its tarball's SHA-256 checked), the
project's modules in one zip, and the pure-Python wheels the shared
package needs (w3lib, Protego), each checked against its SHA-256 too.
They go under ``pyodide/`` in the built site, so the site still works
from a folder served by ``python -m http.server``.  The tarball and the
wheels are kept between builds in a cache outside the repository
(``$CRAWLER_TUTORIAL_CACHE``, else ``~/.cache/crawler-tutorial``): the
first build runs ``npm pack`` and ``pip download``, the next ones only
check the checksums.

The build also runs each step it found on the command line, in the same
world with the same seed (``python -m shared.page MODULE``), and writes
what it printed into ``pyodide/manifest.json``: after a run, the page
compares its output with it and says whether they match (the browser
test holds them to it).  A step that starts threads gets no Run button
but a note: the page's Python has no threads.  Stage 3's step gets a note
saying why it cannot run in the page.  Every text is in the page's
language, English or Chinese.
"""

from __future__ import annotations

import ast
import hashlib
import html
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from shared.page.session import FENCE, is_session, sessions

ROOT = Path(__file__).resolve().parents[2]
PYODIDE_VERSION = "314.0.8"
PYODIDE_SHA256 = "9a52704e0ae5b07aaacb8e4fed9f1658e8024694a078695ea45ac79dee4cefcb"
PYTHON_VERSION = "3.14.2"  # Pyodide 314.0.8's (its pyodide-lock.json says so; checked).
# What the page needs of the package: the loader, the interpreter, its standard library.
PYODIDE_FILES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json"]  # fmt: skip
# Pure-Python wheels from PyPI: what the shared package imports (w3lib, Protego),
# and pytest with what it needs, for the URL and link tests run in the browser.
WHEELS = {
    "w3lib-2.5.0-py3-none-any.whl":
        "136fd5edfe64b53b8579838e2a7e803495bbbe6b69ddfaeed3c29a794b44f6ba",
    "protego-0.7.0-py3-none-any.whl":
        "944638aaee608f6c83fcad442695f3f9381a60be8d5007248f46b00f201fa5fc",
    "pytest-9.1.1-py3-none-any.whl":
        "37a86b45efb9a47a61a36449063e8e18d0cab3161329fc099eb21783169c4f0c",
    "pluggy-1.7.0-py3-none-any.whl":
        "7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec",
    "iniconfig-2.3.1-py3-none-any.whl":
        "9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7",
    "packaging-26.4-py3-none-any.whl":
        "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2",
    "pygments-2.21.0-py3-none-any.whl":
        "2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9",
}  # fmt: skip
# The wheels every run needs; the others (pytest's) are unpacked only when asked for.
RUNTIME_WHEELS = ["w3lib-2.5.0-py3-none-any.whl", "protego-0.7.0-py3-none-any.whl"]
PACKAGES = ["shared", "stage1_callbacks", "stage2_generators", "stage3_asyncio"]
STEP_DIRS = ["stage1_callbacks/steps", "stage2_generators/steps"]
STAGE3_STEPS = "stage3_asyncio/steps"
# The pages whose >>> sessions run in the page: they need only the standard library.
SESSION_PAGES = ["docs/generators.md", "docs/generators.zh.md"]
FOLDER = "pyodide"  # In the built site.
OUTPUTS = "run_in_page_outputs"  # Config keys: the command line's outputs, the pages' steps.
FOUND = "run_in_page_found"
# A fence whose body is one include of a Python file, whole or in part, as a listing is written.
INCLUDE_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,})[ \t]*(?P<info>[^`\n]*)\n"
    r'(?P<body>(?P=indent)--8<-- "(?P<file>[^":]+\.py)(?::(?P<part>[^"]+))?"[ \t]*\n)'
    r"(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE,
)
# A console block as docs/hooks/command_output.py writes a step's run: its command first.
OUTPUT_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,})console\n"
    r"(?P=indent)\$ python -m (?P<module>stage[123]_\w+\.steps\.\w+)\n",
    re.MULTILINE,
)
OUTPUT = "output"  # The data-step-part of a step's console block.
# A rendered code block: Material's <div class="language-X highlight" ...>, up to its </pre></div>.
CODE_BLOCK = re.compile(
    r'<div class="language-(?P<lang>[\w-]+) highlight"(?P<attrs>[^>]*)>(?P<inner>.*?)</pre></div>',
    re.DOTALL,
)
ATTRIBUTE = re.compile(r'\s(?P<name>data-(?:step|step-part|session))="(?P<value>[^"]*)"')

WORDS = {
    "en": {
        "run": "Run", "edit": "Edit", "reset": "Reset",
        "part": "The page shows part of this step's file; Run runs all of it, and Edit "
                "opens the whole file. ",
        "output": "The page shows what this step prints, not its code; Run runs it, and "
                  "Edit opens its file. ",
        "runs": (
            "Run runs this step in your browser (Python {python}, Pyodide {pyodide}) against "
            "a simulated test site, 50 ms an answer, on a virtual clock: its times are "
            "virtual. In a terminal, <code>python -m shared.page {module}</code> prints the "
            "same lines."
        ),
        "http11": " Its server answers in HTTP/1.1, the real test site in HTTP/1.0.",
        "sorted": " Here a page's new links are fetched in sorted order, not in a set's "
                  "order, which differs from one Python to another.",
        "threads": (
            "This step starts threads, and the Python in the page has none: run it in a "
            "terminal, <code>python -m {module}</code>."
        ),
        "stage3": (
            "Stage 3 does not run in the page: it needs aiohttp 3.14, which the Python in "
            "the page (Pyodide {pyodide}) does not have. Run it in a terminal: "
            "<code>python -m {module}</code>."
        ),
        "noscript": "The Run button needs JavaScript.",
        "session": (
            "Run a session here: Python {python} in your browser (Pyodide {pyodide}). The Run "
            "button under a session runs the sessions above it first, silently, in one "
            "namespace, as the tests do, then its own, and shows what the prompt prints; "
            "where the page writes <code>...</code> in a traceback, the prompt prints the "
            "frames. <code>python -m shared.page {page}:N</code> prints the same lines in a "
            "terminal for the session numbered N."
        ),
    },
    "zh": {
        "run": "运行", "edit": "编辑", "reset": "还原",
        "part": "页面上列出的只是这一步文件的一部分；“运行”会运行整个文件，“编辑”打开完整的文件。",
        "output": "页面上列出的是这一步打印的内容，不是它的代码；“运行”运行它，"
                  "“编辑”打开它的文件。",
        "runs": (
            "“运行”在你的浏览器里运行这一步（Python {python}，Pyodide {pyodide}），对着一个"
            "模拟的测试站点，每个应答 50 毫秒，时钟是虚拟的，所以打印的时间也是虚拟的。在终端里，"
            "<code>python -m shared.page {module}</code> 打印的行和这里一样。"
        ),
        "http11": "它的服务器用 HTTP/1.1 应答，真实的测试站点用 HTTP/1.0。",
        "sorted": "在这里，一个页面的新链接按排好的顺序抓取，"
                  "而不是按集合的顺序（集合的顺序因 Python 而异）。",
        "threads": (
            "这一步要启动线程，而页面里的 Python 没有线程：请在终端里运行 "
            "<code>python -m {module}</code>。"
        ),
        "stage3": (
            "第三阶段不能在页面里运行：它需要 aiohttp 3.14，而页面里的 Python（Pyodide "
            "{pyodide}）没有。请在终端里运行：<code>python -m {module}</code>。"
        ),
        "noscript": "“运行”按钮需要 JavaScript。",
        "session": (
            "可以在这里运行这些会话：浏览器里的 Python {python}（Pyodide {pyodide}）。会话下面的"
            "“运行”按钮先在同一个命名空间里悄悄运行它上面的会话，和测试的做法一样，再运行它自己，"
            "显示提示符下打印的内容；页面上回溯里写成 <code>...</code> 的地方，提示符会打印出各个"
            "栈帧。在终端里运行 <code>python -m shared.page {page}:N</code>，打印的是第 N 个会话，"
            "行行相同。"
        ),
    },
}  # fmt: skip


# --- The steps a page shows whole ------------------------------------------------


def step_files() -> dict[str, str]:
    """Return the text of every step module of stages 1, 2 and 3, by module name."""
    found = {}
    for folder in [*STEP_DIRS, STAGE3_STEPS]:
        for path in sorted((ROOT / folder).glob("*.py")):
            if path.stem != "__init__":
                module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                found[module] = path.read_text(encoding="utf-8")
    return found


def needs_threads(source: str) -> bool:
    """Tell whether a step imports threading (or a thread pool), which the page lacks."""
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        if any(name.split(".")[0] in ("threading", "concurrent") for name in names):
            return True
    return False


def command_line_output(module: str, config: dict[str, Any]) -> str:
    """Return what ``python -m shared.page MODULE`` prints, running it once per build."""
    outputs: dict[str, str] = config.setdefault(OUTPUTS, {})
    if module not in outputs:
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}
        try:
            done = subprocess.run(
                [sys.executable, "-m", "shared.page", module],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
        except subprocess.TimeoutExpired as error:
            raise PluginError(f"python -m shared.page {module}: {error}") from None
        if done.returncode != 0 or done.stderr:
            raise PluginError(
                f"python -m shared.page {module} exited {done.returncode}:\n"
                f"{done.stdout[-2000:]}{done.stderr}"
            )
        outputs[module] = done.stdout
    return outputs[module]


def controls(module: str, lang: str, output: str, source: str, part: str) -> str:
    """Return the HTML of a runnable listing's toolbar and output box."""
    words = WORDS[lang]
    note = words["output"] if part == OUTPUT else words["part"] if part else ""
    note += words["runs"].format(python=PYTHON_VERSION, pyodide=PYODIDE_VERSION, module=module)
    if "HTTP/1.1 " in output:
        note += words["http11"]
    if "links_to_follow" in source:  # It crawls: shared/page/run.py sorts the links.
        note += words["sorted"]
    return (
        '<div class="run-bar">'
        f'<button type="button" class="run-button md-button" disabled>{words["run"]}</button>'
        f'<button type="button" class="run-edit md-button" disabled>{words["edit"]}</button>'
        f'<button type="button" class="run-reset md-button" hidden>{words["reset"]}</button>'
        '<span class="run-status" aria-live="polite"></span>'
        "</div>"
        f'<p class="run-note">{note}<noscript> {words["noscript"]}</noscript></p>'
        '<div class="run-output" hidden></div>'
    )


def step_module(file: str) -> str | None:
    """Return the module of a step file of stages 1, 2 or 3 (a path in the repo), or None."""
    path = Path(file)
    if path.parent.as_posix() not in [*STEP_DIRS, STAGE3_STEPS] or path.stem == "__init__":
        return None
    return ".".join(path.with_suffix("").parts) if (ROOT / path).is_file() else None


def tag_listings(markdown: str) -> str:
    """Tag each fence that includes a step, whole or in part, with its module.

    The fence is rewritten in superfences' brace form, with the same
    language and options, plus ``data-step`` and ``data-step-part``
    attributes, which attr_list puts on the rendered block.
    """

    def tag(match: re.Match[str]) -> str:
        module = step_module(match["file"])
        info = match["info"].strip()
        if module is None or not info or info.startswith("{"):
            return match[0]
        language, _, options = info.partition(" ")
        if language not in ("python", "py"):
            return match[0]
        attributes = f'data-step="{module}"'
        if match["part"]:
            attributes += f' data-step-part="{html.escape(match["part"])}"'
        head = f"{match['indent']}{match['fence']}{{ .{language} {options} {attributes} }}"
        return f"{head}\n{match['body']}{match['indent']}{match['fence']}"

    def tag_output(match: re.Match[str]) -> str:
        module = match["module"]
        attributes = f'data-step="{module}" data-step-part="{OUTPUT}"'
        head = f"{match['indent']}{match['fence']}{{ .console {attributes} }}\n"
        return head + match[0].split("\n", 1)[1]

    markdown = INCLUDE_FENCE.sub(tag, markdown)
    return OUTPUT_FENCE.sub(tag_output, markdown)


def tag_sessions(markdown: str, page: str) -> str:
    """Tag each ```pycon block of a page whose sessions run here with ``data-session``.

    Raises PluginError when the blocks differ from those of the page's
    file, which the page's run reads (another hook changed them).
    """
    if sessions(markdown) != sessions((ROOT / page).read_text(encoding="utf-8")):
        raise PluginError(f"{page}: its >>> sessions changed before rendering")
    numbers = iter(range(1, len(sessions(markdown)) + 1))

    def tag(match: re.Match[str]) -> str:
        if match["lang"] != "pycon" or not sessions(match[0]):
            return match[0]
        info = f'{match["info"].strip()} data-session="{page}:{next(numbers)}"'
        head = f"{match['indent']}{match['fence']}{{ .pycon {info} }}\n"
        return head + match[0].split("\n", 1)[1]

    return FENCE.sub(tag, markdown)


def tagged(attrs: str) -> tuple[str | None, str]:
    """Return the step module and part a rendered block was tagged with (None, "" if none)."""
    found = {match["name"]: html.unescape(match["value"]) for match in ATTRIBUTE.finditer(attrs)}
    if "data-session" in found:
        return found["data-session"], ""
    return found.get("data-step"), found.get("data-step-part", "")


def session_listing(block: str, reference: str, lang: str, first: bool) -> str:
    """Return a session's block with its Run button and output box (and the note, if first)."""
    words = WORDS[lang]
    note = ""
    if first:
        page = reference.rpartition(":")[0]
        text = words["session"].format(python=PYTHON_VERSION, pyodide=PYODIDE_VERSION, page=page)
        note = f'<p class="run-note">{text}<noscript> {words["noscript"]}</noscript></p>'
    return (
        f'<div class="run-listing run-session" data-run="{reference}">{block}'
        '<div class="run-bar">'
        f'<button type="button" class="run-button md-button" disabled>{words["run"]}</button>'
        '<span class="run-status" aria-live="polite"></span>'
        f'</div>{note}<div class="run-output" hidden></div></div>'
    )


def chosen_blocks(blocks: list[tuple[str | None, str]], steps: dict[str, str]) -> dict[str, int]:
    """Return, for each step of a page's tagged blocks, the index of the block that runs it.

    The whole step's listing, else the last of its parts, else its output
    (when the page lists steps of the same stage).
    """

    def rank(part: str) -> int:
        return 2 if part == OUTPUT else 1 if part else 0

    listed = {module.split(".")[0] for module, part in blocks if module and part != OUTPUT}
    chosen: dict[str, int] = {}
    for index, (module, part) in enumerate(blocks):
        if module not in steps or (part == OUTPUT and module.split(".")[0] not in listed):
            continue
        if module not in chosen or rank(part) <= rank(blocks[chosen[module]][1]):
            chosen[module] = index
    return chosen


def mark_listings(output: str, lang: str, config: dict[str, Any]) -> str:
    """Give each step a rendered page shows its Run control, or a note why it has none.

    One listing per step gets it: see ``chosen_blocks``.
    """
    steps = step_files()
    found: set[str] = config.setdefault(FOUND, set())
    blocks = [tagged(match["attrs"]) for match in CODE_BLOCK.finditer(output)]
    chosen = chosen_blocks(blocks, steps)
    counter = iter(range(len(blocks)))

    first_session = next((module for module, _ in blocks if module and is_session(module)), None)

    def mark(match: re.Match[str]) -> str:
        index, block = next(counter), match[0]
        module, part = blocks[index]
        if module is not None and is_session(module):
            found.add(module)
            command_line_output(module, config)
            return session_listing(block, module, lang, first=module == first_session)
        if module is None or chosen.get(module) != index:
            return block
        words = WORDS[lang]
        if module.startswith("stage3_asyncio."):
            note = words["stage3"].format(pyodide=PYODIDE_VERSION, module=module)
            return f'{block}<p class="run-note run-elsewhere">{note}</p>'
        if needs_threads(steps[module]):
            note = words["threads"].format(module=module)
            return f'{block}<p class="run-note run-elsewhere">{note}</p>'
        found.add(module)
        shown = command_line_output(module, config)
        where = f' data-part="{html.escape(part)}"' if part else ""
        return (
            f'<div class="run-listing" data-run="{module}"{where}>{block}'
            f"{controls(module, lang, shown, steps[module], part)}</div>"
        )

    return CODE_BLOCK.sub(mark, output)


# --- What the site carries -----------------------------------------------------------


def cache_dir() -> Path:
    """Return the folder that keeps the tarball and the wheels between builds."""
    folder = os.environ.get("CRAWLER_TUTORIAL_CACHE") or Path.home() / ".cache" / "crawler-tutorial"
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256(path: Path) -> str:
    """Return the SHA-256 of a file, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def checked(path: Path, expected: str) -> bool:
    """Tell whether ``path`` exists with the SHA-256 ``expected``."""
    return path.is_file() and sha256(path) == expected


def fetch(command: list[str], path: Path, expected: str) -> Path:
    """Return ``path`` once it holds ``expected``'s bytes, running ``command`` if need be.

    Raises PluginError when the command fails or brings other bytes.
    """
    if checked(path, expected):
        return path
    path.unlink(missing_ok=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        raise PluginError(
            f"{command[0]} not found: the site carries its own Python, which the first "
            f"build fetches with `{' '.join(command[:3])}`; install {command[0]} (Node.js) "
            "and build again"
        ) from None
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PluginError(f"{' '.join(command)}: {error}") from None
    if done.returncode != 0:
        raise PluginError(f"{' '.join(command)} failed:\n{done.stderr}")
    if not checked(path, expected):
        got = sha256(path) if path.is_file() else "no file"
        raise PluginError(f"{path.name}: SHA-256 {got}, expected {expected}")
    return path


def pyodide_tarball() -> Path:
    """Return the checked tarball of the npm package, fetching it with npm once."""
    folder = cache_dir()
    path = folder / f"pyodide-{PYODIDE_VERSION}.tgz"
    command = ["npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", str(folder)]
    return fetch(command, path, PYODIDE_SHA256)


def wheel(name: str) -> Path:
    """Return a checked wheel, fetching it with pip once."""
    folder = cache_dir()
    project, version = name.split("-")[:2]
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "-q", "-d", str(folder), f"{project}=={version}"]  # fmt: skip
    return fetch(command, folder / name, WHEELS[name])


def project_zip() -> bytes:
    """Return a zip of the project's modules (their tests left out), as the page imports them.

    The pages whose sessions run in the page are in it too: a session reads its blocks there.
    """
    names = [
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "tests" not in path.relative_to(ROOT).parts
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in [*names, *SESSION_PAGES]:
            info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (ROOT / name).read_bytes())
    return buffer.getvalue()


def copy_python(folder: Path) -> dict[str, Any]:
    """Put Pyodide, the project and the wheels into ``folder``; return the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(pyodide_tarball()) as tarball:
        for name in PYODIDE_FILES:
            member = tarball.extractfile(f"package/{name}")
            if member is None:
                raise PluginError(f"the pyodide package holds no {name}")
            (folder / name).write_bytes(member.read())
    lock = json.loads((folder / "pyodide-lock.json").read_text(encoding="utf-8"))
    if lock["info"]["python"] != PYTHON_VERSION:
        raise PluginError(f"Pyodide {PYODIDE_VERSION} runs Python {lock['info']['python']}")
    (folder / "project.zip").write_bytes(project_zip())
    (folder / "wheels").mkdir(exist_ok=True)
    for name in WHEELS:
        shutil.copyfile(wheel(name), folder / "wheels" / name)
    (folder / "README.txt").write_text(
        f"Pyodide {PYODIDE_VERSION} (Python {PYTHON_VERSION}), the files the docs' Run buttons\n"
        f"need from `npm pack pyodide@{PYODIDE_VERSION}` (MPL-2.0, https://pyodide.org);\n"
        "project.zip: this tutorial's modules; wheels/: from PyPI, under their own licenses.\n",
        encoding="utf-8",
    )
    sizes = {name: (folder / name).stat().st_size for name in [*PYODIDE_FILES, "project.zip"]}
    sizes |= {f"wheels/{name}": (folder / "wheels" / name).stat().st_size for name in WHEELS}
    return {
        "pyodide": PYODIDE_VERSION,
        "python": PYTHON_VERSION,
        "built_with": platform.python_version(),  # The terminal's, whose outputs the page shows.
        "wheels": [f"wheels/{name}" for name in RUNTIME_WHEELS],
        "test_wheels": [f"wheels/{name}" for name in WHEELS if name not in RUNTIME_WHEELS],
        "sizes": sizes,
    }


# --- The hook's events ---------------------------------------------------------------


def on_page_markdown(markdown: str, page: Any, config: dict[str, Any], **kwargs: object) -> str:
    """Tag the page's listings of steps and sessions, before snippets and superfences run."""
    source = f"docs/{page.file.src_uri}"
    if source in SESSION_PAGES:
        markdown = tag_sessions(markdown, source)
    return tag_listings(markdown)


def on_page_content(output: str, page: Any, config: dict[str, Any], **kwargs: object) -> str:
    """Give the page's listings of steps and sessions their Run controls."""
    lang = "zh" if page.file.src_uri.endswith(".zh.md") else "en"
    return mark_listings(output, lang, config)


def on_post_page(output: str, page: Any, config: dict[str, Any]) -> str:
    """Give a page with a runnable listing its script and style sheet."""
    if 'class="run-listing' not in output:
        return output
    root = "../" * page.url.count("/")
    head = f'<link rel="stylesheet" href="{root}stylesheets/run.css">\n'
    # The replay player's script comes only when a reader opens a run in it (run.js).
    body = f'<script src="{root}javascripts/run.js" data-root="{root}"></script>\n'
    output = output.replace("</head>", head + "</head>", 1)
    return output.replace("</body>", body + "</body>", 1)


def on_post_build(config: dict[str, Any], **kwargs: object) -> None:
    """Copy the page's Python into the built site, with the command line's outputs."""
    folder = Path(config["site_dir"]) / FOLDER
    if not config.get(FOUND):
        return
    manifest = copy_python(folder)
    outputs = {module: config[OUTPUTS][module] for module in sorted(config[FOUND])}
    manifest["outputs"] = outputs
    steps = step_files()
    manifest["sources"] = {  # What Edit opens.
        module: steps[module] for module in outputs if not is_session(module)
    }
    (folder / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8"
    )
