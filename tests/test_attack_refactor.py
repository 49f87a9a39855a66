"""Attacks on issue 31's refactor: every call answered through the one pipeline (the MCP server's refusals too), the
wrapping toolsets, the architecture test's import reader, and the layout's child processes from an installed copy."""
import asyncio, logging

import pytest

from funccall import Tool

T = 20  # seconds: the most any one exchange may take

class _Records(logging.Handler):
    "The `funccall` logger's lines: a traced call says `execute_tool NAME ...` at DEBUG"
    def __init__(self): super().__init__(); self.lines = []
    def emit(self, r): self.lines.append(r.getMessage())

@pytest.fixture
def traced():
    h, lg = _Records(), logging.getLogger('funccall')
    old = lg.level
    lg.addHandler(h); lg.setLevel(logging.DEBUG)
    yield h.lines
    lg.removeHandler(h); lg.setLevel(old)

# --- the MCP server answers every call through the pipeline ------------------------------------------

def _mcp_call(server, name, args):
    from mcp import Client
    async def go():
        async with Client(server) as c: return await c.call_tool(name, args)
    return asyncio.run(asyncio.wait_for(go(), T))

def _deleter(log):
    def delete(path: str) -> str:
        "Delete a file"
        log.append(path)
        return 'deleted'
    return Tool(delete, requires_confirmation=True)

def test_mcp_unknown_tool_is_the_pipelines_not_found_and_traced(traced):
    pytest.importorskip('mcp')
    from funccall.mcp import mk_server
    r = _mcp_call(mk_server([_deleter([])]), 'delete.__globals__', {'a': 1})
    assert r.is_error and r.content[0].text == "ToolNotFound: Unknown tool 'delete.__globals__'; available tools: 'delete'"
    assert 'execute_tool delete.__globals__ (call None) failure: name' in traced

def test_mcp_refusal_for_a_client_that_cannot_ask_is_a_declined_call_of_the_pipeline(traced):
    pytest.importorskip('mcp')
    from funccall.mcp import mk_server
    log = []
    server = mk_server([_deleter(log)])
    r = _mcp_call(server, 'delete', {'path': 'a.txt'})
    assert r.is_error and r.content[0].text == ("Tool 'delete' needs the user's confirmation, and this MCP client can't ask for it "
                                                "(it declared no form-mode elicitation): the call was refused")
    assert log == [] and 'execute_tool delete (call None) failure: declined' in traced
