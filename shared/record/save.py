"""Save the HTML pages of a crawl under a directory, mirrored by URL (``crawl --save``).

The layout is that of ``wget -r --protocol-directories``, a directory for
the scheme, one for the host and port, then the URL's path, with a path
that ends in ``/`` saved as ``index.html`` in that directory.  The names
differ where wget's would not be valid on every system: wget names the
host's directory ``host:8080`` on Linux and ``host+8080`` on Windows,
where ``:`` is not allowed; here every name goes through the one escaping
rule below, so ``http://host:8080/a/b.html`` is saved as
``DIR/http/host%3a8080/a/b.html`` on every system.  A query follows the
name after ``@``, as wget writes it on Windows (``search@q=1``).

Two promises, kept by ``relative_path`` for any string:

- Two URLs never share a file.  Nothing is decoded that would make two
  URLs one (``%83e`` and ``%84e`` stay apart), and every name is lower
  case ASCII, so a file system that ignores case (Windows, macOS) or
  normalizes Unicode (macOS) cannot merge two names either.  A character
  that may not stay as it is becomes ``%xx`` (its UTF-8 bytes, lower-case
  hex): an upper-case letter, anything outside ASCII, and ``:``, ``?``,
  ``*``, ``"``, ``<``, ``>``, ``|``, ``\\``, ``@``, ``#``, ``%``, space
  and control characters.  An escape already in the URL stays one:
  ``%83`` as ``%83``, and an escape of a printable character as ``%25``
  and its hex, so ``a%3Ab`` and ``a:b`` stay two.
- Every name is valid on Windows, macOS and Linux: none of the characters
  above, never ``.`` or ``..``, no trailing dot (nor space), no device
  name (``con``, ``nul.html``, ``com1``...: their first letter is escaped),
  at most MAX_NAME_BYTES bytes (longer ones are cut and marked with a
  digest).  A relative path longer than MAX_PATH_BYTES is folded into one
  hashed name; past 260 characters in all, Windows needs its long-path
  setting, as for any program.

``..`` and ``.`` segments are resolved without climbing above the host, so
the path stays inside DIR whatever the URL.  ``PageSaver`` then writes the
page, making room when a page and a directory want the same name (``/a``
and ``/a/b``): the page ``a`` moves into the directory ``a`` as MOVED.
"""

from __future__ import annotations

import hashlib
import logging
import re
import string
import tempfile
import urllib.parse
from pathlib import Path, PurePosixPath

LOGGER = logging.getLogger("shared.record.save")
INDEX = "index.html"  # The file name of a URL that names a directory.
# The page ``a`` once ``a`` must be a directory.  Escaping never writes "%"
# followed by something other than two hex digits, so no URL maps here.
MOVED = "%page.html"
MAX_NAME_BYTES = 200  # File systems allow 255 bytes in one name; keep a margin.
MAX_PATH_BYTES = 1024  # Longer relative paths are folded into one hashed name.
KEEP = frozenset(string.ascii_lowercase + string.digits + "-._~!$&'()+,;=[]")
ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# Names Windows keeps for devices, alone or before an extension (nul.html).
DEVICES = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$"]
    + [f"{kind}{n}" for kind in ("com", "lpt") for n in range(10)]
)
DOT_SEGMENTS = {".": 1, "%2e": 1, "..": 2, ".%2e": 2, "%2e.": 2, "%2e%2e": 2}


def relative_path(url: str) -> PurePosixPath:
    """Return the path, relative to the save directory, of the page at ``url``.

    Never raises; every part of the result is a name valid on Windows, macOS
    and Linux, and two different URLs get two different paths.
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # An unbalanced '[' in the host.
        parts = urllib.parse.SplitResult("", "", url, "", "")
    userinfo, _, host = parts.netloc.rpartition("@")
    if userinfo:  # Credentials never go into a file name; a digest keeps them apart.
        host = sha256(userinfo)[:16] + "@" + host
    *directories, last = path_segments(parts.path)
    name = escape_name(last) if last else INDEX
    if "?" in url.partition("#")[0]:  # A query, even an empty one.
        name += "@" + escape(parts.query)
    top = [fit(escape_name(parts.scheme)), fit(escape_name(host))]
    relative = PurePosixPath(*top, *(fit(escape_name(d)) for d in directories), fit(name))
    if len(str(relative)) > MAX_PATH_BYTES:  # ASCII: one byte a character.
        relative = PurePosixPath(*top, "%long", sha256(url) + ".html")
    return relative


def path_segments(path: str) -> list[str]:
    """Return the segments of a URL path, still escaped, with dot segments resolved.

    A backslash separates segments, as browsers treat it; ``..`` (also
    written ``%2e%2e``) never climbs above the root.  The last segment is
    the file name, empty when the path names a directory.
    """
    segments = re.split(r"[/\\]", path)
    if segments[0] == "":  # The path starts at the root.
        segments = segments[1:] or [""]
    resolved: list[str] = []
    for segment in segments:
        dots = DOT_SEGMENTS.get(segment.lower(), 0)
        if dots == 2:
            resolved = resolved[:-1]
        elif dots == 0:
            resolved.append(segment)
    if DOT_SEGMENTS.get(segments[-1].lower()):
        resolved.append("")  # /a/.. names a directory, as /a/../ does.
    return resolved or [""]


def escape(text: str) -> str:
    """Return ``text`` with each character a file name may not hold as ``%xx``.

    An escape already in ``text`` stays one: a byte that cannot appear
    as itself in a URL as ``%xx``, a printable one as ``%25xx``.
    """
    out, i = [], 0
    while i < len(text):
        if found := ESCAPE.match(text, i):
            hex_digits = found.group()[1:].lower()
            out.append(("%25" if 0x20 < int(hex_digits, 16) < 0x7F else "%") + hex_digits)
            i += 3
        else:
            char = text[i]
            data = char.encode("utf-8", "surrogatepass")
            out.append(char if char in KEEP else "".join(f"%{b:02x}" for b in data))
            i += 1
    return "".join(out)


def escape_name(segment: str) -> str:
    """Return one segment as a name; an empty one (``//``) is ``%``, no escape's result."""
    name = escape(segment)
    if name == "":
        return "%"
    if name.partition(".")[0] in DEVICES or name == INDEX:
        name = f"%{ord(name[0]):02x}{name[1:]}"  # Reserved: escape its first letter.
    return name


def fit(name: str) -> str:
    """Return ``name`` without a final dot, cut to MAX_NAME_BYTES with a digest."""
    if name.endswith("."):  # Windows drops a final dot: a. would be a.
        name = name[:-1] + "%2e"
    if len(name) <= MAX_NAME_BYTES:  # ASCII: one byte a character.
        return name
    return f"{name[: MAX_NAME_BYTES - 18]}%-{sha256(name)[:16]}"


def sha256(text: str) -> str:
    """Return the SHA-256 of ``text`` in hex; lone surrogates count as they are."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
        directory as MOVED; a page whose name is a directory is saved there
        as MOVED.
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
        if target.is_dir():  # The page a, where the pages a/... already are.
            target = self.inside(target / MOVED)
        return target

    def inside(self, path: Path) -> Path:
        """Return ``path`` if it resolves inside the directory; else raise OSError."""
        if not path.resolve().is_relative_to(self.root):
            raise OSError(f"{path} leads out of {self.root}")
        return path


def _move_into_directory(page: Path) -> None:
    """Turn the file ``page`` into a directory holding it as MOVED."""
    holder = Path(tempfile.mkdtemp(dir=page.parent, prefix=".moving-"))
    page.rename(holder / MOVED)
    page.mkdir()
    (holder / MOVED).rename(page / MOVED)
    holder.rmdir()
