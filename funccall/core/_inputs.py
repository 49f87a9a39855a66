"""What the model sent: reading a tool call's arguments, and the error that reports everything wrong with them.

A model's tool call is untrusted input. `read_arguments` turns what came (a dict, JSON text, nothing) into a dict
of named arguments; `ToolInputError` is what every part of funccall raises when the arguments don't fit a tool:
calls, tools, batches, expressions, the MCP server and built tools, so the model reads one voice. Every problem
found is reported at once, one line each, so the model can fix them all in one turn:

    Tool 'book' got 3 bad arguments:
    - when: expected an ISO 8601 date-time string or null, got 'tomorrow 9am'
    - room: missing (required)
    - town: unknown argument; the tool takes 'when', 'room', 'status'

A single problem reads as one line: `Tool 'add', argument 'a': expected an integer, got 'x'`.
"""
from __future__ import annotations

import builtins, json, reprlib
from typing import NamedTuple

__all__ = ['ToolInputError', 'Problem', 'read_arguments', 'short', 'problems_text', 'MAX_SHOWN']

MAX_SHOWN = 10
"The most problems one message lists; the rest are counted, so a huge bad input stays a short message"

class _Bounded(reprlib.Repr):
    "`repr` that looks at a bounded part of a value, however deep or large: the head of strings, the first items of containers"
    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong, self.maxdict = 4, 80, 80, 60, 6

    def repr_str(self, x, level):
        r = builtins.repr(x[:self.maxstring])
        return r if len(x) <= self.maxstring else r[:-1] + '...' + r[-1]

    # the model sent JSON: its words for the constants
    def repr_NoneType(self, x, level): return 'null'
    def repr_bool(self, x, level): return 'true' if x else 'false'
    def repr_float(self, x, level): return 'NaN' if x != x else 'Infinity' if x == float('inf') else '-Infinity' if x == float('-inf') else repr(x)

    def repr_int(self, x, level):
        try: return super().repr_int(x, level)
        except ValueError: return f'<an integer of {x.bit_length()} bits>'  # over Python's limit on digits

_bounded = _Bounded()

def short(
    v,           # any value the model sent
    n: int = 80, # the most characters to show
) -> str:        # `repr(v)`, cut short
    "`repr(v)` in JSON's words (null, true, NaN), cut to `n` characters; reads a bounded part of `v`, however large or deep"
    t = type(v)
    if t is str and len(v) <= 80 or t is int and -10**17 < v < 10**17: r = repr(v)  # the common cases, as `_bounded` writes them
    else:
        try: r = _bounded.repr(v)
        except Exception: r = f'<{type(v).__name__}>'  # a value whose own `repr` fails
    return r if len(r) <= n else r[:n - 3] + '...'

class Problem(NamedTuple):
    "One thing wrong with a tool call's arguments"
    path: str      # where: `items[2].sku` as the model sent it, or '' for the call as a whole
    message: str   # what: `expected an integer, got 'x'`

    def __str__(self): return f"{self.path}: {self.message}" if self.path else self.message

def problems_text(
    tool: str | None,             # the tool's name, or None when it is not known
    problems: list[Problem],      # what is wrong, in the order found
    more: bool = False,           # whether there are more problems than `problems` (the search stopped)
) -> str:                         # the one message the model reads
    "Every problem in one message: one line for one problem, else a line each, at most `MAX_SHOWN` and a count of the rest"
    who = f"Tool {tool!r}" if tool else 'The tool call'
    if len(problems) == 1 and not more:
        p = problems[0]
        return f"{who}, argument {p.path!r}: {p.message}" if p.path else f"{who}: {p.message}"
    n = len(problems)
    # how many there were, and that only some are shown: a model fixing ten of twelve must know two remain
    shown = f" (the first {MAX_SHOWN} shown)" if more or n > MAX_SHOWN else ''
    head = f"{who} got {'at least ' if more else ''}{n} bad arguments{shown}:"  # `more`: the search stopped, counting `n`
    lines = [head, *[f"- {at}: {m}" if at else f"- {m}" for at, m in problems[:MAX_SHOWN]]]  # (`Problem.__str__`, written out)
    if more or n > MAX_SHOWN: lines.append('- ... and more' if more else f'- ... and {n - MAX_SHOWN} more')
    return '\n'.join(lines)

class ToolInputError(ValueError):
    "A model's tool call whose arguments don't fit the tool: missing, unexpected, or of the wrong type; `.errors` lists each problem"
    errors: list[Problem]  # each problem: where (the argument's path) and what is wrong

    def __init__(self, message: str, errors: list[Problem] | None = None):
        super().__init__(message)
        self.errors = list(errors) if errors is not None else [Problem('', message)]

    @classmethod
    def of(cls,
        tool: str | None,             # the tool's name
        problems: list[Problem],      # what is wrong
        more: bool = False,           # whether there are more problems than `problems` (the search stopped)
    ) -> ToolInputError:              # the error, its message from `problems_text`
        "The error for `problems` with `tool`'s arguments, in the one message every part of funccall sends"
        return cls(problems_text(tool, problems, more), problems)

_DECODE_ERRORS = (ValueError, RecursionError, MemoryError)  # bad JSON, nested too deeply, too large
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # what `json.loads` runs in C, without its layers of Python around it

def _loads(text: str):
    "`json.loads(text)`; text that is one JSON object and nothing else (what models send) is read by the scanner at once"
    if text[:1] == '{':
        try: v, end = _scan(text, 0)  # a bad object raises here what `json.loads` raises: the same scanner at the same place,
        except StopIteration: pass    # but for a value missing at the end, which `json.loads` words itself
        else:
            if end == len(text): return v
    return json.loads(text)  # white space around, or any other value: `json.loads`'s own rules and errors

def read_arguments(
    fc_inputs,          # the arguments as the model sent them: a dict, JSON text, or nothing; a `ToolInputError` is raised
    tool: str | None = None,  # the tool's name, for the error
) -> dict:              # the named arguments
    """The arguments as a dict. Models often send the JSON text instead, nothing for no arguments, and sometimes
    the JSON text of a string holding the JSON text of the object (encoded twice): that is read too, as it can mean
    nothing else."""
    if isinstance(fc_inputs, dict): return fc_inputs
    if isinstance(fc_inputs, ToolInputError): raise ToolInputError.of(tool, fc_inputs.errors)  # a call refused as it came (a stream's)
    if fc_inputs is None or (isinstance(fc_inputs, str) and (not fc_inputs or fc_inputs.isspace())): return {}
    if isinstance(fc_inputs, str):
        try: v = _loads(fc_inputs)
        except _DECODE_ERRORS as e:
            why = e.args[0] if isinstance(e, ValueError) and e.args else 'nested too deeply or too large'
            raise ToolInputError.of(tool, [Problem('', f"the arguments are not valid JSON ({why}): {short(fc_inputs, 60)}")]) from None
        if isinstance(v, str) and v.lstrip()[:1] == '{':  # encoded twice: the text of a string holding the object
            try: v = json.loads(v)
            except _DECODE_ERRORS: pass
        if isinstance(v, dict): return v
        fc_inputs = v
    raise ToolInputError.of(tool, [Problem('', f"the arguments must be a JSON object of named arguments, got {short(fc_inputs, 60)}")])
