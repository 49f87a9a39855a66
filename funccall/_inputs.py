"""What the model sent: reading a tool call's arguments, and the error that reports everything wrong with them.

A model's tool call is untrusted input. `read_arguments` turns what came (a dict, JSON text, nothing) into a dict
of named arguments; `ToolInputError` is what every part of funccall raises when the arguments don't fit a tool:
calls, tools, batches, expressions, the MCP server and built tools, so the model reads one voice.
"""
from __future__ import annotations

import json
from typing import NamedTuple

__all__ = ['ToolInputError', 'Problem', 'read_arguments', 'short']

def short(
    v,           # any value the model sent
    n: int = 80, # the most characters to show
) -> str:        # `repr(v)`, cut short
    "`repr(v)`, cut to `n` characters: messages quote what the model sent without echoing all of it"
    try: r = repr(v)
    except (ValueError, RecursionError): r = f'<{type(v).__name__} too large to show>'  # an int over 4300 digits, a deep list
    return r if len(r) <= n else r[:n - 3] + '...'

class Problem(NamedTuple):
    "One thing wrong with a tool call's arguments"
    path: str      # where: `items[2].sku`, or '' for the call as a whole
    message: str   # what: `expected an integer, got 'x'`

    def __str__(self): return f"{self.path}: {self.message}" if self.path else self.message

class ToolInputError(ValueError):
    "A model's tool call whose arguments don't fit the tool: missing, unexpected, or of the wrong type; `.errors` lists each problem"
    def __init__(self, message: str, errors: list[Problem] | None = None):
        super().__init__(message)
        self.errors = list(errors) if errors is not None else [Problem('', message)]

def read_arguments(
    fc_inputs,          # the arguments as the model sent them: a dict, JSON text, or nothing
    tool: str | None = None,  # the tool's name, for the error
) -> dict:              # the named arguments
    "The arguments as a dict: models often send the JSON text instead, or nothing for no arguments"
    if isinstance(fc_inputs, dict): return fc_inputs
    if fc_inputs is None or (isinstance(fc_inputs, str) and not fc_inputs.strip()): return {}
    if isinstance(fc_inputs, str):
        try: v = json.loads(fc_inputs)
        except (ValueError, RecursionError) as e:
            raise ToolInputError(f"Tool arguments are not valid JSON ({e}): {short(fc_inputs, 60)}") from None
        if isinstance(v, dict): return v
        fc_inputs = v
    raise ToolInputError(f"Tool arguments must be a JSON object of named arguments, got {short(fc_inputs, 60)}")
