"""Where the Python funccall generates (the validator's checks and reports, built tools' code) can be read.

Each generated source is compiled under a filename of its own naming what it is (`<funccall validator check: Tool
'search' #12>`, `<funccall tool 'search' #13>`), and its lines are put in `linecache`, so a traceback through it shows
each line's text and `pdb` can `list` it. The entries are bounded: at most the `KEPT` newest are held (past it, the
oldest quarter is dropped: its function keeps working, and its text stays on it as `__source__`; only a traceback
through it shows no lines). Templates every built tool runs (`shared`: one per number of parameters) are kept apart,
the `KEPT_SHARED` newest, so a flood of tools can't push them out.

When the environment variable `FUNCCALL_SHOW_CODE` names a folder, each source is also written there as a `.py` file
(made if missing), and compiled under that real path instead, so an IDE's debugger can step into it. Unset, nothing is
written. All of this runs once per generated source, never on a call."""
from __future__ import annotations

import itertools, linecache, os, re, threading, warnings

from ._package import SHOW_CODE

__all__ = ['SHOW_CODE', 'KEPT', 'KEPT_SHARED', 'source_name']

KEPT = 1024  # the most generated sources whose lines `linecache` holds at once
KEPT_SHARED = 256  # and the most templates shared by every tool (`shared=True`), apart from those

_numbers = itertools.count(1)
_kept: dict[str, None] = {}  # the names we put in `linecache`, oldest first
_kept_shared: dict[str, None] = {}  # likewise, the shared templates'
_lock = threading.Lock()
_unsafe = re.compile(r'[^A-Za-z0-9_-]+')

def source_name(
    what: str,  # what the source is, for its name: "validator check: Tool 'search'"; any text (a tool's name is a model's or a server's)
    src: str,   # the source
    shared: bool = False,  # a template every tool of a kind runs (a few dozen at most): kept apart from the others
) -> str:       # the filename to compile `src` under: a written file's path, or `<funccall what #n>` held in `linecache`
    "A filename of its own for generated source `src`, under which a traceback or debugger finds its lines"
    n = next(_numbers)
    if folder := os.environ.get(SHOW_CODE):
        if (path := _write(folder, n, what, src)) is not None: return path
    name = f'<funccall {_shown(what)} #{n}>'
    with _lock:
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)  # (no mtime: `checkcache` leaves it)
        kept, most = (_kept_shared, KEPT_SHARED) if shared else (_kept, KEPT)
        kept[name] = None
        if len(kept) > most:  # the oldest quarter dropped at once: `linecache.checkcache()` in another thread (IPython calls
            # it often) lists the keys, then looks each up, and raises `KeyError` for one removed between (every Python to
            # 3.13): a drop now and then, not one each new source, makes that rare
            while len(kept) > most - most // 4:
                del kept[old := next(iter(kept))]
                linecache.cache.pop(old, None)
    return name

def _shown(what: str) -> str:
    "`what` on one line, at most 80 characters, with no `>` to end the name early"
    what = ascii(what)[1:-1].replace('>', '\\x3e')  # (not the `unicode_escape` codec: importing it costs the first tools a millisecond)
    return what if len(what) <= 80 else what[:77] + '...'

def _write(folder: str, n: int, what: str, src: str) -> str | None:
    "`src` written to a file of its own in `folder` (its name made of safe characters alone), or None when it can't be"
    path = os.path.join(os.path.abspath(folder), f'funccall_{os.getpid()}_{n}_{_unsafe.sub("_", what)[:60].strip("_")}.py')
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with os.fdopen(_created(path), 'w', encoding='utf-8') as f: f.write(src)
    except (OSError, ValueError) as e:
        warnings.warn(f"{SHOW_CODE}: can't write generated code to {folder!r} ({e}); it is kept in memory", RuntimeWarning, stacklevel=3)
        return None
    return path

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0)  # (O_EXCL: a link at `path` is never followed)

def _created(path: str) -> int:
    """A new file at `path`, open to write: what is there already (a stale file of a process with the same pid, or a link
    someone planted at the predictable name) is removed, never written through, so a link can't aim the write elsewhere"""
    try: return os.open(path, _NEW, 0o644)
    except FileExistsError: os.unlink(path)  # (the link itself, not what it points to)
    return os.open(path, _NEW, 0o644)  # (planted again meanwhile: FileExistsError, the caller's warning)
