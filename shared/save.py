"""Save the HTML pages of a crawl under a directory, mirrored by URL (``crawl --save``).

The layout follows ``wget -r``: ``http://host:8080/a/b.html`` is saved as
``DIR/host:8080/a/b.html``, a path that ends in ``/`` as ``index.html`` in
that directory, and a query stays in the file name (``search?q=1``).

A URL is data from the web, so the mapping trusts nothing in it: whatever
the URL (``..``, ``%2e%2e``, backslashes, an absolute path, NUL, names too
long for the file system), ``relative_path`` returns a path of plain names
that stays inside DIR.  ``PageSaver`` then writes the page, making room when
a page and a directory want the same name (``/a`` and ``/a/b``): the page
``a`` moves to ``a/index.html``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tempfile
import urllib.parse
from pathlib import Path, PurePosixPath

LOGGER = logging.getLogger("shared.save")
INDEX = "index.html"  # The file name of a URL that names a directory.
MAX_NAME_BYTES = 200  # File systems allow 255 bytes in one name; keep a margin.
MAX_PATH_BYTES = 1024  # Longer relative paths are folded into one hashed name.
# A character that is unsafe in a file name: a separator, a control
# character, or a lone surrogate that no file system encoding accepts.
UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\\ud800-\udfff]")


def relative_path(url: str) -> PurePosixPath:
    """Return the path, relative to the save directory, of the page at ``url``.

    Never raises; every part of the result is a plain name (not empty, not
    ``.`` or ``..``, without separators or NUL) of at most MAX_NAME_BYTES.
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # An unbalanced '[' in the host.
        parts = urllib.parse.SplitResult("", "", url, "", "")
    host = safe_name(parts.netloc.rpartition("@")[2] or "_")
    *directories, name = path_segments(parts.path)
    if parts.query:
        name += "?" + urllib.parse.unquote(parts.query)
    relative = PurePosixPath(host, *map(safe_name, directories), safe_name(name))
    if len(str(relative).encode("utf-8")) > MAX_PATH_BYTES:
        digest = hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()
        relative = PurePosixPath(host, "_long", digest + ".html")
    return relative


def path_segments(path: str) -> list[str]:
    """Return the segments of a URL path, decoded, with dot segments resolved.

    ``%2e%2e`` is ``..`` once decoded and a backslash separates segments as
    browsers treat it; ``..`` never climbs above the root.  The last segment
    is the file name: INDEX when the path names a directory.
    """
    segments = re.split(r"[/\\]", urllib.parse.unquote(path))
    resolved: list[str] = []
    for segment in segments:
        if segment == "..":
            resolved = resolved[:-1]
        elif segment not in ("", "."):
            resolved.append(segment)
    if segments[-1] in ("", ".", ".."):
        resolved.append(INDEX)
    return resolved


def safe_name(name: str) -> str:
    """Return ``name`` as one safe file name: unsafe characters as ``%XX``, cut if long."""
    name = UNSAFE.sub(_percent_encode, name) or "_"
    if name in (".", ".."):
        name = name.replace(".", "%2E")
    encoded = name.encode("utf-8")
    if len(encoded) > MAX_NAME_BYTES:
        digest = hashlib.sha256(encoded).hexdigest()[:16]
        head = encoded[: MAX_NAME_BYTES - 17].decode("utf-8", "ignore")
        name = f"{head}-{digest}"
    return name


def _percent_encode(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode("utf-8", "surrogatepass"))


class PageSaver:
    """Save each page under ``directory``; the crawler's ``on_page`` callback.

    Creates the directory; raises OSError from the constructor when it cannot.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.root = self.directory.resolve()
        self.saved = 0

    def __call__(self, url: str, body: bytes) -> None:
        """Write the page at ``url``; log a failure to write rather than raise it."""
        try:
            path = self.make_room(relative_path(url))
            path.write_bytes(body)
        except OSError as error:
            LOGGER.error("cannot save %s: %s", url, error)
            return
        self.saved += 1
        LOGGER.debug("saved %s as %s", url, path)

    def make_room(self, relative: PurePosixPath) -> Path:
        """Create the directories of ``relative``; return the file to write.

        A page saved earlier where a directory is needed now moves into that
        directory as INDEX; a page whose name is a directory becomes its INDEX.
        Raises OSError, also for a symbolic link (not made by the saver) that
        leads out of the directory.
        """
        here = self.directory
        for part in relative.parts[:-1]:
            here = self.inside(here / part)
            if here.exists() and not here.is_dir():
                _move_into_directory(here)
            here.mkdir(exist_ok=True)
        target = self.inside(here / relative.name)
        while target.is_dir():
            target = self.inside(target / INDEX)
        return target

    def inside(self, path: Path) -> Path:
        """Return ``path`` if it resolves inside the directory; else raise OSError."""
        if not path.resolve().is_relative_to(self.root):
            raise OSError(f"{path} leads out of {self.root}")
        return path


def _move_into_directory(page: Path) -> None:
    """Turn the file ``page`` into a directory holding it as INDEX."""
    holder = Path(tempfile.mkdtemp(dir=page.parent, prefix=".moving-"))
    page.rename(holder / INDEX)
    page.mkdir()
    (holder / INDEX).rename(page / INDEX)
    holder.rmdir()
