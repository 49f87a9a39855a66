"""funccall's `MCPClient` as the official MCP conformance suite's client scenarios drive it: `python conformance_client.py URL`,
the scenario named in `$MCP_CONFORMANCE_SCENARIO` (initialize, tools_call, elicitation-sep1034-client-defaults)."""
import os, sys

from funccall.mcp import MCPClient

def main(url: str, scenario: str) -> None:
    with MCPClient(url, timeout=20, on_elicit=lambda message, schema: {}) as c:  # accept, changing nothing: the defaults
        tools = c.tools()
        if scenario == 'tools_call': print(tools['add_numbers'](a=2, b=3))
        elif scenario == 'elicitation-sep1034-client-defaults': print(tools['test_client_elicitation_defaults']())
        else: print(sorted(tools))

if __name__ == '__main__': main(sys.argv[-1], os.environ.get('MCP_CONFORMANCE_SCENARIO', 'initialize'))
