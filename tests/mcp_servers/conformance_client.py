"""funccall's `MCPClient` as the official MCP conformance suite's client scenarios drive it: `python conformance_client.py URL`,
the scenario named in `$MCP_CONFORMANCE_SCENARIO` (initialize, tools_call, elicitation-sep1034-client-defaults, auth/*).
For the auth scenarios it signs in through the SDK's `OAuthClientProvider`, following the authorization server's
redirect itself where a person would use a browser."""
import json, os, sys
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from funccall.mcp import MCPClient

class Memory:
    "Tokens and the registered client, kept for the run"
    def __init__(self): self.tokens = self.client = None
    async def get_tokens(self): return self.tokens
    async def set_tokens(self, tokens): self.tokens = tokens
    async def get_client_info(self): return self.client
    async def set_client_info(self, info): self.client = info

def oauth(url: str) -> OAuthClientProvider:
    got = {}
    async def redirect(auth_url: str) -> None:  # the authorization server approves at once and redirects back with a code
        async with httpx2.AsyncClient() as h: r = await h.get(auth_url, follow_redirects=False)
        q = parse_qs(urlparse(r.headers['location']).query)
        got.update(code=q['code'][0], state=q.get('state', [None])[0])
    async def callback() -> AuthorizationCodeResult: return AuthorizationCodeResult(**got)
    meta = OAuthClientMetadata(client_name='funccall conformance client', redirect_uris=['http://localhost:3030/callback'],
                               grant_types=['authorization_code', 'refresh_token'], response_types=['code'])
    memory, given = Memory(), json.loads(os.environ.get('MCP_CONFORMANCE_CONTEXT') or '{}')
    if 'client_id' in given:  # a client registered beforehand
        memory.client = OAuthClientInformationFull(**{**meta.model_dump(), 'token_endpoint_auth_method': 'client_secret_basic'},
                                                   client_id=given['client_id'], client_secret=given.get('client_secret'))
    return OAuthClientProvider(url, meta, memory, redirect, callback, client_metadata_url='https://conformance-test.local/client-metadata.json')

def main(url: str, scenario: str) -> None:
    auth = oauth(url) if scenario.startswith('auth/') else None
    with MCPClient(url, timeout=20, auth=auth, on_elicit=lambda message, schema: {}) as c:  # accept, changing nothing: the defaults
        tools = c.tools()
        if scenario == 'tools_call': print(tools['add_numbers'](a=2, b=3))
        elif scenario == 'elicitation-sep1034-client-defaults': print(tools['test_client_elicitation_defaults']())
        else:
            print(sorted(tools))
            for nm, f in tools.items():  # an authorized call too, where the server offers one without arguments
                if not c.schemas()[list(tools).index(nm)]['input_schema'].get('required'): print(json.dumps(f(), default=str)[:200])

if __name__ == '__main__': main(sys.argv[-1], os.environ.get('MCP_CONFORMANCE_SCENARIO', 'initialize'))
