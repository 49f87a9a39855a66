"""A second reviewer's attacks on the day's changes (issues 35, 36, 38): each "never", "only", "at most" and "bounded"
the README and docstrings now promise, attacked as a hostile model, tool, MCP server or client would.

Each test makes the attack and asserts its effect did not happen: what reaches the model is bounded on the failure path
too, ...
"""
import sys
from pathlib import Path

import pytest

from funccall import Toolbox, tool_results
from funccall.loop.results import MAX_RESULT_CHARS

SERVERS = Path(__file__).parent / 'mcp_servers'
PROVIDERS = ('anthropic', 'openai', 'responses', 'gemini')

def _chars(v) -> int:
    "The characters of every string in a message (keys and values), as the model reads them"
    if isinstance(v, str): return len(v)
    if isinstance(v, dict): return sum(_chars(k) + _chars(x) for k, x in v.items())
    return sum(map(_chars, v)) if isinstance(v, (list, tuple)) else len(str(v))

# --- (5) the default result bound, on the failure path ------------------------------------------------

def test_a_huge_exception_message_reaches_the_model_bounded():
    n = 3 * MAX_RESULT_CHARS
    def boom(n: int) -> str:
        "Fails at length"
        raise ValueError('x' * n)
    for errors in ('message', 'traceback'):
        r = Toolbox([boom], errors=errors).call('boom', {'n': n}, call_id='c1')
        assert r.failure == 'tool' and r.exception is not None and len(str(r.exception)) == n  # the developer keeps the whole
        assert len(r.error) < MAX_RESULT_CHARS + 100 and r.text == r.error and 'characters shown]' in r.error
        for p in PROVIDERS: assert _chars(tool_results([r], p)) < MAX_RESULT_CHARS + 1_000, p

def test_a_hostile_servers_huge_error_reaches_the_model_bounded():
    pytest.importorskip('mcp')
    from funccall.mcp import MCPClient
    n = 3 * MAX_RESULT_CHARS
    with MCPClient([sys.executable, str(SERVERS / 'huge_result_server.py')], timeout=60) as c:
        r = Toolbox([c.tools()]).call('fail', {'n': n}, call_id='c1')
    assert r.failure == 'tool' and len(r.error) < MAX_RESULT_CHARS + 100 and 'characters shown]' in r.error, r.error[-80:]
    for p in PROVIDERS: assert _chars(tool_results([r], p)) < MAX_RESULT_CHARS + 1_000, p
