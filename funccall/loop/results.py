"""Results: what one tool call came to (`ToolResult`), and the text a model reads of it.

Below the tools, the pipeline and the provider message shapes: each of them makes, reads or writes results, and none
of them needs more of the others than this module.
"""
from __future__ import annotations

import json, reprlib
from dataclasses import dataclass, field
from typing import Any, Literal

from . import content
from ..core._json import jsonable
from ..core._typing import JsonDict

__all__ = ['ToolResult', 'StopRun', 'ToolTimeout', 'to_text', 'call_str', 'MAX_RESULT_CHARS']

# What a tool's result may put in front of the model by default (`Tool(max_chars=...)`; None: no bound): about 25,000
# tokens, what Claude Code lets an MCP tool's output take by default (`MAX_MCP_OUTPUT_TOKENS`); a result longer than
# that is more often a runaway or a hostile server than something a model reads whole
MAX_RESULT_CHARS: int = 100_000

class StopRun(Exception):
    "Raised by a tool or hook to stop the agent loop: the call's result has `stop` set, its value the message (if any)"

class ToolTimeout(TimeoutError):
    "A tool did not finish within its `timeout` (or a batch's): the call's result is a failure of kind 'timeout'"

_encode = json.JSONEncoder(ensure_ascii=False).encode  # `json.dumps(..., ensure_ascii=False)` makes an encoder per call
_NUMBERS = frozenset({int, float, bool, type(None)})

def to_text(
    v: Any,                 # a tool's result
    limit: int | None=None, # at most this many characters; longer text is cut, and says so
) -> str:                   # what the model reads
    "A tool result as text for the model: strings as they are, data as JSON, anything else as its `str`"
    if isinstance(v, str): s = v
    elif type(v) in _NUMBERS: s = _encode(v)  # (what `jsonable` leaves as it is, and holds no media)
    elif (ps := content.parts(v, to_text)) is not None: s = content.text_of(ps)
    else:
        try: s = _encode(jsonable(v))
        except (TypeError, ValueError, RecursionError):  # not JSON, or a structure that contains itself
            try: s = str(v)
            except RecursionError: s = object.__repr__(v)
    if limit is not None and len(s) > limit:
        s = s[:limit] + f"\n[... cut: {limit:,} of {len(s):,} characters shown]"
    return s

def call_str(
    name: str,   # the tool's name
    args: JsonDict,  # its arguments
    width: int=200,  # at most this many characters
) -> str:        # `lookup(symbol='ACME', limit=3)`; with values that `repr` as code, a call expression too
    "A readable one-line call, for logs"
    s = f"{name}({', '.join(f'{k}={_code_repr(v)}' for k, v in args.items())})"
    return s if len(s) <= width else s[:width - 4] + '...)'

_repr = reprlib.Repr()  # Python's own spelling (None, True), so the call reads as code; bounded however large `v` is
_repr.maxstring = _repr.maxother = 60

def _code_repr(v: Any, n: int = 60) -> str:
    try: r = _repr.repr(v)
    except Exception: r = f'<{type(v).__name__}>'  # a value whose own `repr` fails
    return r if len(r) <= n else r[:n - 3] + '...'

@dataclass
class ToolResult:
    "What one tool call came to"
    name: str                                  # the tool's name
    arguments: JsonDict                        # the arguments the tool ran with (after the pre-hook)
    status: Literal['success', 'failure', 'pending']  # 'pending': waiting for the user's approval (`Toolbox.resume`)
    value: Any = None                          # the tool's return value, on success
    error: str | None = None                   # the message for the model, on failure
    call_id: str | None = None                 # the provider's id for this call, to answer it
    cached: bool = False                       # whether the value came from the cache
    stop: bool = False                         # the tool asks the agent loop to stop after this call
    limit: int | None = field(default=None, repr=False)  # cut `text` to this many characters (the tool's `max_chars`)
    failure: Literal['name', 'arguments', 'tool', 'timeout', 'declined'] | None = None  # whose failure: the model's call
    #   (an unknown tool, bad arguments), the tool's (it raised), a timeout, or the user's refusal
    exception: BaseException | None = field(default=None, repr=False, compare=False)  # what was raised, on failure
    attempts: int = field(default=1, repr=False, compare=False)  # how many times the tool ran (more than once: retried)
    seal: str | None = field(default=None, repr=False)  # a pending call's seal: `Toolbox.resume` takes the record only unchanged

    @property
    def ok(self) -> bool: return self.status == 'success'

    @property
    def text(self) -> str:
        "What the model reads: the value as text, or the error message"
        if self.status == 'pending': return f"Waiting for the user's approval to run {call_str(self.name, self.arguments)}"
        return to_text(self.value, self.limit) if self.ok else self.error  # type: ignore[return-value]  # (a failure has its error)

    @property
    def cut(self) -> bool:
        "Whether `text` is cut (the value's text is longer than `limit`): then the model reads `text`, never the whole value"
        return self.ok and self.limit is not None and len(to_text(self.value)) > self.limit

    def to_dict(self) -> JsonDict:
        "The result as JSON data (`json.dumps` takes it; `from_dict` reads it back): a pending approval, kept while the user decides"
        d: JsonDict = {'name': self.name, 'arguments': jsonable(self.arguments), 'status': self.status, 'call_id': self.call_id}
        if self.status == 'failure': d.update(error=self.error, failure=self.failure)
        if self.status == 'success' and (ps := content.parts(self.value, to_text)) is not None: d['value'] = content.to_json(ps)
        elif self.status == 'success':
            try: d['value'] = json.loads(json.dumps(jsonable(self.value)))
            except (TypeError, ValueError, RecursionError): d['value'] = self.text  # what the model reads, when JSON can't hold the value
        if self.stop: d['stop'] = True
        if self.limit is not None: d['limit'] = self.limit
        if self.seal is not None: d['seal'] = self.seal
        return d

    @classmethod
    def from_dict(
        cls,
        d: JsonDict,  # from `to_dict`, after a round trip through JSON
    ) -> ToolResult:
        "A result read back from `to_dict`'s data"
        if not isinstance(d, dict) or not {'name', 'arguments', 'status'} <= set(d):
            raise ValueError(f"Not a ToolResult's data (needs name, arguments, status): {d!r:.100}")
        keys = ('error', 'call_id', 'stop', 'limit', 'failure', 'seal')
        return cls(d['name'], d['arguments'], d['status'], value=content.from_json(d.get('value')), **{k: d[k] for k in keys if k in d})
