"""What a stdio MCP server said before it failed: its last lines on stderr (passed on to where they were going, as they
come) and its exit status, so a connection that fails says why rather than only "Connection closed".

The SDK's stdio client keeps its process to itself: importing this module wraps the SDK's (private) spawn function
once, so that a `spawned()` block in the same task sees the process it started. The wrapper only records; without
that function (another SDK version) the exit status is left out and the rest works."""
from __future__ import annotations

import os, threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any

import mcp.client.stdio as _sdk_stdio

__all__ = ['StderrTail', 'spawned', 'exit_note']

_TAIL = 4096  # bytes of a command's stderr kept to explain a failure (the rest passes through, unkept)
_LINES = 5    # lines of it shown in an error message
_LAST_WORDS = 1.0  # seconds to wait for the end of a command's stderr once it exited (a child of it may hold it open)

class StderrTail:
    "A pipe for a command's stderr: a thread passes each chunk on to `errlog` and keeps the last `_TAIL` bytes"
    _out: Any  # `errlog`: a text file (its `buffer` taken), a binary one, a descriptor or None
    def __init__(self, errlog: IO[Any] | int | None):  # `None`: this process's stderr; `subprocess.DEVNULL` (or any int < 0): nowhere; else a file
        r, w = os.pipe()
        self.child = os.fdopen(w, 'wb')  # what the command writes to; closed here once it has it
        self._tail, self._out, self._lock = bytearray(), errlog, threading.Lock()
        self.done = threading.Event()  # set once the command (and all that share its stderr) closed it
        threading.Thread(target=self._pump, args=(r,), name='funccall-mcp-stderr', daemon=True).start()

    def _write(self, b: bytes) -> None:
        out = self._out
        if out is None: os.write(2, b)
        elif isinstance(out, int):
            if out >= 0: os.write(out, b)  # a file descriptor; DEVNULL and the other negative constants: nowhere
        elif hasattr(out, 'buffer'):  # a text file: its own pending text first, then the bytes as they came
            out.flush()
            out.buffer.write(b)
            out.buffer.flush()
        else:
            try: out.write(b)
            except TypeError: out.write(b.decode(errors='replace'))
            out.flush()

    def _pump(self, r: int) -> None:
        with open(r, 'rb', buffering=0) as f:
            while b := f.read(65536):
                with self._lock: self._tail = (self._tail + b)[-_TAIL:]
                try: self._write(b)
                except Exception: pass  # a closed or broken errlog costs its copy, not the connection
        self.done.set()

    def lines(self) -> list[str]:
        "The last few lines the command wrote to stderr"
        with self._lock: text = bytes(self._tail).decode(errors='replace')
        return [ln for ln in text.splitlines() if ln.strip()][-_LINES:]

_procs: ContextVar[list | None] = ContextVar('funccall_mcp_procs', default=None)
_spawn = getattr(_sdk_stdio, '_create_platform_compatible_process', None)

async def _recording(*args: Any, **kw: Any) -> Any:
    "The SDK's spawn, which also hands the process to the `spawned` block that asked for it"
    p = await _spawn(*args, **kw)  # type: ignore[misc]  # (installed only when `_spawn` is there)
    if (box := _procs.get()) is not None: box.append(p)
    return p

if _spawn is not None: _sdk_stdio._create_platform_compatible_process = _recording  # the SDK keeps its process to itself

@contextmanager
def spawned() -> Iterator[list[Any]]:
    "A list that gets the processes the SDK's stdio client spawns in this block (in this task), to read their exit status"
    box: list[Any] = []
    token = _procs.set(box)
    try: yield box
    finally: _procs.reset(token)

def exit_note(procs: list[Any], tail: StderrTail | None) -> str:
    "What the command said as it failed: its exit status, when it has exited, and its last lines on stderr"
    code = getattr(procs[0], 'returncode', None) if procs else None
    if code is not None and tail is not None: tail.done.wait(_LAST_WORDS)  # what it wrote last may still be in the pipe
    said = [] if code is None else [f"the server exited with status {code}" if code >= 0 else f"the server was ended by signal {-code}"]
    if tail is not None and (ls := tail.lines()): said.append('its last lines on stderr:\n  ' + '\n  '.join(ls))
    return '; '.join(said)
