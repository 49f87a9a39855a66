"""What a code-mode program's own process runs (`codemode.code_tool(isolate=True)`), and what it shares with code mode.

It runs under `_sandbox`'s supervisor, which sets its limits. The process imports only this module, `inverse` and
`pytool` (not funccall's `__init__`, which loads every module), so it starts in about the time Python itself takes.
It reads one JSON line (the program, and each tool's Python name and schema), runs the program, and for each tool
call writes a JSON line up the pipe and reads the answer.
"""
from __future__ import annotations

import json, os, sys

from ..core.inverse import mk_tool
from .pytool import run_in_process

__all__ = ['ToolCallError', 'CodeError', 'TB', 'namespace', 'main', 'COMMAND']

class ToolCallError(Exception):
    "A tool called from a program failed: the message is what the model would have read"

class CodeError(Exception):
    "The model's program failed: the message is what it printed and its traceback"

# the model reads these by their bare names, as it reads `ValueError`
ToolCallError.__module__ = CodeError.__module__ = 'builtins'

TB = 'Traceback (most recent call last):'  # how `python` reports an error in the program

MAX_PRINTED = 100_000  # characters of a program's printed output kept for its result; the rest is counted, not kept

def namespace(out: list) -> dict:
    "A program's globals before its functions are added: its `print` writes to `out`, for the result (at most `MAX_PRINTED`)"
    kept = [0]
    def print_(*a, sep=' ', end='\n', file=None, flush=False):
        if file is not None and file is not sys.stdout: return print(*a, sep=sep, end=end, file=file, flush=flush)
        s = sep.join(map(str, a)) + end
        if kept[0] < MAX_PRINTED: out.append(s[:MAX_PRINTED - kept[0]])
        kept[0] += len(s)
        if kept[0] > MAX_PRINTED and (not out or not out[-1].startswith('\n[... printed output cut')):
            out.append(f'\n[... printed output cut at {MAX_PRINTED} characters]\n')
    return {'__name__': '__main__', 'print': print_, 'ToolCallError': ToolCallError}

def main() -> None:  # pragma: no cover (runs in the sandboxed program's process, which coverage can't follow)
    "Run the program the parent sends (the command line gives funccall's folder), its tool calls answered by the parent"
    chan_out, chan_in = os.fdopen(os.dup(1), 'w'), sys.stdin
    os.dup2(2, 1)  # what else writes to stdout (C code, `os.write(1, ...)`) must not break the channel
    sys.stdout = sys.stderr
    job = json.loads(chan_in.readline())
    def send(msg): chan_out.write(json.dumps(msg, default=str) + '\n'); chan_out.flush()
    def call(name, /, **args):
        send({'call': name, 'args': args})
        r = json.loads(chan_in.readline())
        if not r['ok']: raise ToolCallError(r['error'])
        return r['value']
    out: list = []
    ns = {**namespace(out), **{py: mk_tool(call, schema, check=False) for py, schema in job['tools']}}
    v = run_in_process(job['code'], glb=ns)  # the parent keeps the deadline: it kills this process
    send({'done': True, 'printed': ''.join(out), 'value': v, 'failed': isinstance(v, str) and v.startswith(TB)})

# funccall's package without its `__init__`: the modules this one needs, and no more
COMMAND = ("import sys, types; pkg = types.ModuleType('funccall'); pkg.__path__ = [sys.argv[1]]; sys.modules['funccall'] = pkg; "
           "from funccall.toolsets._codechild import main; main()")
