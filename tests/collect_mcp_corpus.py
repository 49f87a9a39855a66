"""Collect the tool schemas of real MCP servers into `tests/data/mcp_corpus/`, one JSON file per server.

The script installs nothing. It starts each server it knows (the `SERVERS` table below) over stdio with the
official `mcp` client, lists its tools page by page, and stores every tool exactly as the server sent it: the
`tools` entries of the raw `tools/list` results are taken off the wire, before the SDK's models parse them,
so a schema's `$schema`, `$defs`, `"default": null` or unknown keys reach the tests as they were published.
A server that fails to start or list within `--timeout` seconds is reported and skipped.

Install the servers first, outside the repo (they are data sources, not project dependencies). The script
prints the commands: npm servers into a few npm projects under one folder (`NPM_GROUP`), each PyPI server into
a venv of its own (their pins clash), with Python 3.12 (or pass `--python`):

    python tests/collect_mcp_corpus.py --install-commands | bash

Then, from the repo root with the project's venv (which has `mcp`):

    python tests/collect_mcp_corpus.py [--npm-root /tmp/mcp-npm] [--venvs /tmp/mcp-venvs] [NAME ...]

Credentials are dummies (see `env` below): these servers list their tools without calling their service.
"""
from __future__ import annotations

import argparse, datetime, json, logging, os, shlex, subprocess, sys, tempfile
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, stdio_client

OUT = Path(__file__).parent/'data'/'mcp_corpus'
SCRATCH = Path(tempfile.gettempdir())/'mcp-corpus-scratch'  # a harmless directory, repo and database for servers that need one

AWS = {'AWS_REGION': 'us-east-1', 'AWS_ACCESS_KEY_ID': 'dummy', 'AWS_SECRET_ACCESS_KEY': 'dummy', 'FASTMCP_LOG_LEVEL': 'ERROR'}

# name -> (registry, package, command: the package's bin (or console script) and its arguments, dummy env[, pip pins])
SERVERS: dict[str, tuple] = {
    # the reference servers (modelcontextprotocol/servers), zod-generated schemas
    'filesystem': ('npm', '@modelcontextprotocol/server-filesystem', ['mcp-server-filesystem', '{scratch}'], {}),
    'everything': ('npm', '@modelcontextprotocol/server-everything', ['mcp-server-everything'], {}),
    'memory': ('npm', '@modelcontextprotocol/server-memory', ['mcp-server-memory'], {'MEMORY_FILE_PATH': '{scratch}/memory.jsonl'}),
    'sequential-thinking': ('npm', '@modelcontextprotocol/server-sequential-thinking', ['mcp-server-sequential-thinking'], {}),
    # archived reference servers
    'github': ('npm', '@modelcontextprotocol/server-github', ['mcp-server-github'], {'GITHUB_PERSONAL_ACCESS_TOKEN': 'dummy'}),
    'gitlab': ('npm', '@modelcontextprotocol/server-gitlab', ['mcp-server-gitlab'], {'GITLAB_PERSONAL_ACCESS_TOKEN': 'dummy'}),
    'slack': ('npm', '@modelcontextprotocol/server-slack', ['mcp-server-slack'], {'SLACK_BOT_TOKEN': 'xoxb-dummy', 'SLACK_TEAM_ID': 'T0'}),
    'puppeteer': ('npm', '@modelcontextprotocol/server-puppeteer', ['mcp-server-puppeteer'], {}),
    'brave-search': ('npm', '@modelcontextprotocol/server-brave-search', ['mcp-server-brave-search'], {'BRAVE_API_KEY': 'dummy'}),
    'google-maps': ('npm', '@modelcontextprotocol/server-google-maps', ['mcp-server-google-maps'], {'GOOGLE_MAPS_API_KEY': 'dummy'}),
    'postgres': ('npm', '@modelcontextprotocol/server-postgres', ['mcp-server-postgres', 'postgresql://localhost/dummy'], {}),
    'aws-kb-retrieval': ('npm', '@modelcontextprotocol/server-aws-kb-retrieval', ['mcp-server-aws-kb-retrieval'],
                         {'AWS_ACCESS_KEY_ID': 'dummy', 'AWS_SECRET_ACCESS_KEY': 'dummy', 'AWS_REGION': 'us-east-1'}),
    'everart': ('npm', '@modelcontextprotocol/server-everart', ['mcp-server-everart'], {'EVERART_API_KEY': 'dummy'}),
    'gdrive': ('npm', '@modelcontextprotocol/server-gdrive', ['mcp-server-gdrive'], {'GDRIVE_CREDENTIALS_PATH': '{scratch}/gdrive.json'}),
    # vendors' servers
    'playwright': ('npm', '@playwright/mcp', ['playwright-mcp', '--headless', '--caps=vision,pdf,testing,tracing'], {}),
    'notion': ('npm', '@notionhq/notion-mcp-server', ['notion-mcp-server'], {'NOTION_TOKEN': 'ntn_dummy'}),  # generated from Notion's OpenAPI spec
    'firecrawl': ('npm', 'firecrawl-mcp', ['firecrawl-mcp'], {'FIRECRAWL_API_KEY': 'fc-dummy'}),
    'context7': ('npm', '@upstash/context7-mcp', ['context7-mcp'], {}),
    'tavily': ('npm', 'tavily-mcp', ['tavily-mcp'], {'TAVILY_API_KEY': 'tvly-dummy'}),
    'exa': ('npm', 'exa-mcp-server', ['exa-mcp-server'], {'EXA_API_KEY': 'dummy'}),
    'browsermcp': ('npm', '@browsermcp/mcp', ['mcp-server-browsermcp'], {}),
    'sentry': ('npm', '@sentry/mcp-server', ['sentry-mcp', '--access-token=dummy'], {}),
    'kubernetes': ('npm', 'mcp-server-kubernetes', ['mcp-server-kubernetes'], {}),
    'desktop-commander': ('npm', '@wonderwhy-er/desktop-commander', ['desktop-commander'], {}),
    'chrome-devtools': ('npm', 'chrome-devtools-mcp', ['chrome-devtools-mcp', '--headless'], {}),
    'mongodb': ('npm', 'mongodb-mcp-server', ['mongodb-mcp-server'], {'MDB_MCP_TELEMETRY': 'disabled'}),
    'stripe': ('npm', '@stripe/mcp', ['mcp', '--tools=all', '--api-key=sk_test_dummy'], {}),
    'hubspot': ('npm', '@hubspot/mcp-server', ['mcp-hubspot'], {'PRIVATE_APP_ACCESS_TOKEN': 'dummy'}),
    'figma': ('npm', 'figma-developer-mcp', ['figma-developer-mcp', '--stdio', '--figma-api-key=dummy'], {}),
    'executeautomation-playwright': ('npm', '@executeautomation/playwright-mcp-server', ['playwright-mcp-server'], {}),
    'elasticsearch': ('npm', '@elastic/mcp-server-elasticsearch', ['mcp-server-elasticsearch'], {'ES_URL': 'http://127.0.0.1:1', 'ES_API_KEY': 'dummy'}),
    'browserbase': ('npm', '@browserbasehq/mcp-server-browserbase', ['mcp-server-browserbase'],
                    {'BROWSERBASE_API_KEY': 'dummy', 'BROWSERBASE_PROJECT_ID': 'dummy', 'GEMINI_API_KEY': 'dummy'}),
    'twilio': ('npm', '@twilio-alpha/mcp', ['twilio-mcp-server', 'AC00000000000000000000000000000000/SK00000000000000000000000000000000:dummy'], {}),
    'neon': ('npm', '@neondatabase/mcp-server-neon', ['mcp-server-neon', 'start', 'dummy'], {}),
    'circleci': ('npm', '@circleci/mcp-server-circleci', ['mcp-server-circleci'], {'CIRCLECI_TOKEN': 'dummy'}),
    'lara': ('npm', '@translated/lara-mcp', ['lara-mcp'], {'LARA_ACCESS_KEY_ID': 'dummy', 'LARA_ACCESS_KEY_SECRET': 'dummy'}),
    'pinecone': ('npm', '@pinecone-database/mcp', ['pinecone-mcp'], {'PINECONE_API_KEY': 'dummy'}),
    'browser-tools': ('npm', '@agentdeskai/browser-tools-mcp', ['browser-tools-mcp'], {}),
    'mastra-docs': ('npm', '@mastra/mcp-docs-server', ['mcp-docs-server'], {}),
    'launchdarkly': ('npm', '@launchdarkly/mcp-server', ['mcp', 'start', '--api-key', 'api-dummy'], {}),  # Speakeasy-generated from OpenAPI
    'antv-chart': ('npm', '@antv/mcp-server-chart', ['mcp-server-chart'], {}),
    'zereight-gitlab': ('npm', '@zereight/mcp-gitlab', ['mcp-gitlab'], {'GITLAB_PERSONAL_ACCESS_TOKEN': 'dummy', 'USE_PIPELINE': 'true', 'USE_MILESTONE': 'true', 'USE_GITLAB_WIKI': 'true'}),
    'cyanheads-git': ('npm', '@cyanheads/git-mcp-server', ['git-mcp-server'], {'MCP_TRANSPORT_TYPE': 'stdio', 'MCP_LOG_LEVEL': 'error'}),
    'line-bot': ('npm', '@line/line-bot-mcp-server', ['line-bot-mcp-server'], {'CHANNEL_ACCESS_TOKEN': 'dummy', 'DESTINATION_USER_ID': 'dummy'}),
    'youtube-transcript': ('npm', '@kimtaeyoon83/mcp-server-youtube-transcript', ['mcp-server-youtube-transcript'], {}),
    'amap': ('npm', '@amap/amap-maps-mcp-server', ['mcp-amap'], {'AMAP_MAPS_API_KEY': 'dummy'}),
    # Python servers: FastMCP / pydantic-generated schemas
    'time': ('pypi', 'mcp-server-time', ['mcp-server-time', '--local-timezone=UTC'], {}),
    'fetch': ('pypi', 'mcp-server-fetch', ['mcp-server-fetch'], {}),
    'git': ('pypi', 'mcp-server-git', ['mcp-server-git', '--repository', '{scratch}/repo'], {}),
    'sqlite': ('pypi', 'mcp-server-sqlite', ['mcp-server-sqlite', '--db-path', '{scratch}/corpus.db'], {}, ('mcp<2',)),
    'aws-documentation': ('pypi', 'awslabs.aws-documentation-mcp-server', ['awslabs.aws-documentation-mcp-server'], {'FASTMCP_LOG_LEVEL': 'ERROR'}),
    'arxiv': ('pypi', 'arxiv-mcp-server', ['arxiv-mcp-server', '--storage-path', '{scratch}/arxiv'], {}, ('mcp<2',)),
    'calculator': ('pypi', 'mcp-server-calculator', ['mcp-server-calculator'], {}, ('mcp<2',)),
    'duckduckgo': ('pypi', 'duckduckgo-mcp-server', ['duckduckgo-mcp-server'], {}),
    'aws-cloudwatch': ('pypi', 'awslabs.cloudwatch-mcp-server', ['awslabs.cloudwatch-mcp-server'], AWS, ('mcp<2',)),
    'aws-dynamodb': ('pypi', 'awslabs.dynamodb-mcp-server', ['awslabs.dynamodb-mcp-server'], AWS, ('mcp<2',)),
    'aws-eks': ('pypi', 'awslabs.eks-mcp-server', ['awslabs.eks-mcp-server', '--allow-write', '--allow-sensitive-data-access'], AWS, ('mcp<2',)),
    'aws-pricing': ('pypi', 'awslabs.aws-pricing-mcp-server', ['awslabs.aws-pricing-mcp-server'], AWS, ('mcp<2',)),
    'atlassian': ('pypi', 'mcp-atlassian', ['mcp-atlassian'], {
        'JIRA_URL': 'https://dummy.atlassian.net', 'JIRA_USERNAME': 'dummy@example.com', 'JIRA_API_TOKEN': 'dummy',
        'CONFLUENCE_URL': 'https://dummy.atlassian.net/wiki', 'CONFLUENCE_USERNAME': 'dummy@example.com', 'CONFLUENCE_API_TOKEN': 'dummy'}, ('mcp<2',)),
    'excel': ('pypi', 'excel-mcp-server', ['excel-mcp-server', 'stdio'], {'EXCEL_FILES_PATH': '{scratch}'}),
    'neo4j-cypher': ('pypi', 'mcp-neo4j-cypher', ['mcp-neo4j-cypher'], {'NEO4J_URI': 'bolt://127.0.0.1:1', 'NEO4J_USERNAME': 'neo4j', 'NEO4J_PASSWORD': 'dummy'}, ('mcp<2',)),
    'blender': ('pypi', 'blender-mcp', ['blender-mcp'], {}, ('mcp<2',)),
    'clickhouse': ('pypi', 'mcp-clickhouse', ['mcp-clickhouse'], {'CLICKHOUSE_HOST': '127.0.0.1', 'CLICKHOUSE_USER': 'dummy', 'CLICKHOUSE_PASSWORD': 'dummy'}),
    'office-word': ('pypi', 'office-word-mcp-server', ['word_mcp_server'], {}, ('mcp<2',)),
    'motherduck': ('pypi', 'mcp-server-motherduck', ['mcp-server-motherduck', '--db-path', ':memory:', '--read-write'], {}),
}

def _fill(s: str) -> str: return s.replace('{scratch}', str(SCRATCH))

# npm servers installed in a folder of their own (`npm_root/GROUP`), away from the hoisted dependencies of the others
NPM_GROUP = {'stripe': 'stripe', **dict.fromkeys(['launchdarkly', 'antv-chart', 'zereight-gitlab', 'cyanheads-git', 'line-bot',
                                                   'youtube-transcript', 'amap'], 'extra')}

# npm servers installed at an older version: @stripe/mcp 0.3 only relays a remote server, 0.2 has the tools itself
NPM_PIN = {'stripe': '0.2.5'}

def npm_bin(project: Path, package: str, name: str) -> Path:
    "The file `package` runs as its bin `name` (read from its package.json: `.bin/` links of two packages can collide)"
    root = project/'node_modules'/package
    bins = json.loads((root/'package.json').read_text())['bin']
    return root/(bins if isinstance(bins, str) else bins[name])

def version(registry: str, package: str, home: Path) -> str:
    "The version of `package` installed in `home` (an npm project or a venv)"
    if registry == 'npm': return json.loads((home/'node_modules'/package/'package.json').read_text())['version']
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    return subprocess.run([str(home/'bin'/'python'), '-c', code], capture_output=True, text=True, check=True).stdout.strip()

def command_path(registry: str, package: str, cmd: list[str], home: Path) -> list[str]:
    "`cmd` with its program resolved to the bin entry installed in `home` (run with node for npm: no npx fetch)"
    args = [_fill(a) for a in cmd[1:]]
    if registry == 'npm': return ['node', str(npm_bin(home, package, cmd[0])), *args]
    return [str(home/'bin'/cmd[0]), *args]

@asynccontextmanager
async def recording(transport, pages: list):
    "`transport` whose incoming `tools/list` results are also appended, raw, to `pages`"
    async with transport as (read, write):
        send, recv = anyio.create_memory_object_stream(100)
        async def forward():
            async with send:
                async for m in read:
                    r = getattr(getattr(m, 'message', None), 'result', None)
                    if isinstance(r, dict) and isinstance(r.get('tools'), list): pages.append(r)
                    await send.send(m)
        async with anyio.create_task_group() as tg:
            tg.start_soon(forward)
            try: yield recv, write
            finally: tg.cancel_scope.cancel()

async def list_tools(cmd: list[str], env: dict, errlog, timeout: float) -> tuple[list[dict], dict]:
    "The raw tool dicts `cmd` lists over stdio (following `nextCursor`), and what its handshake said"
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, **env}, cwd=str(SCRATCH))
    pages = []
    with anyio.fail_after(timeout):
        async with Client(recording(stdio_client(params, errlog=errlog), pages), mode='legacy', read_timeout_seconds=timeout) as c:
            n, cursor = 0, None
            while True:
                page = await c.list_tools(cursor=cursor)
                n += len(page.tools)
                if not (cursor := page.next_cursor): break
            info = c.server_info
            meta = {'protocol_version': c.protocol_version, 'server_info': info and info.model_dump(mode='json', exclude_none=True)}
    tools = [t for p in pages for t in p['tools']]
    if len(tools) != n: raise RuntimeError(f"recorded {len(tools)} raw tools but the client listed {n}")
    return tools, meta

def prepare_scratch():
    "The directory, git repository and files the servers are pointed at"
    SCRATCH.mkdir(exist_ok=True)
    (SCRATCH/'README.txt').write_text('scratch directory for collecting MCP tool schemas\n')
    if not (SCRATCH/'repo'/'.git').exists():
        subprocess.run(['git', 'init', '-q', str(SCRATCH/'repo')], check=True)
    (SCRATCH/'gdrive.json').write_text(json.dumps({'access_token': 'dummy', 'refresh_token': 'dummy', 'token_type': 'Bearer'}))

def collect(name: str, npm_root: Path, venvs: Path, timeout: float, out: Path) -> int:
    "Write `out/NAME.json` for server `name` (from the npm project `npm_root/GROUP` or the venv `venvs/NAME`); returns its number of tools"
    registry, package, cmd, env, *_ = SERVERS[name]
    home = npm_root/NPM_GROUP.get(name, 'main') if registry == 'npm' else venvs/name
    ver = version(registry, package, home)
    with tempfile.TemporaryFile('w+') as errlog:
        try: tools, meta = anyio.run(list_tools, command_path(registry, package, cmd, home), {k: _fill(v) for k, v in env.items()}, errlog, timeout)
        except Exception as e:
            while isinstance(getattr(e, 'exceptions', None), tuple) and len(e.exceptions) == 1: e = e.exceptions[0]  # the SDK's task groups
            errlog.seek(0)
            err = errlog.read().strip().splitlines()[-5:]
            raise RuntimeError(f"{type(e).__name__}: {e}\n    " + '\n    '.join(err)) from None
    doc = {'server': name, 'package': package, 'registry': registry, 'version': ver, 'command': cmd,
           'collected': datetime.datetime.now(datetime.timezone.utc).date().isoformat(), **meta, 'tools': tools}
    (out/f'{name}.json').write_text(json.dumps(doc, indent=1, ensure_ascii=False) + '\n')
    return len(tools)

def _style(tools: list[dict]) -> str:
    "What marks a server's input schemas: the `$schema` they declare and the keywords that tell how they were made"
    text = json.dumps([t.get('inputSchema') for t in tools])
    declared = sorted({(t.get('inputSchema') or {}).get('$schema', '') for t in tools} - {''})
    marks = [k for k in ('$defs', '$ref', 'anyOf', 'oneOf', 'allOf') if f'"{k}"' in text]
    return ', '.join([*(d.rstrip('#').split('/schema')[0].rsplit('/', 1)[-1] for d in declared), *marks]) or 'plain'

def readme_table(out: Path) -> str:
    "The README's table of the servers in `out`"
    rows = ['| file | package | registry | version | tools | input schemas |', '| --- | --- | --- | --- | --- | --- |']
    for p in sorted(out.glob('*.json')):
        d = json.loads(p.read_text())
        rows.append(f"| {p.name} | `{d['package']}` | {d['registry']} | {d['version']} | {len(d['tools'])} | {_style(d['tools'])} |")
    return '\n'.join(rows)

def update_readme(out: Path):
    "Replace the table between the README's `<!-- servers -->` markers with one for the files in `out`"
    readme = out/'README.md'
    if not readme.exists(): return
    head, rest = readme.read_text().split('<!-- servers -->\n', 1)
    tail = rest.split('<!-- /servers -->', 1)[1]
    readme.write_text(f"{head}<!-- servers -->\n{readme_table(out)}\n<!-- /servers -->{tail}")

def install_commands(npm_root: Path, venvs: Path, python: str) -> str:
    "Shell commands that install every server in `SERVERS` where this script looks for them"
    groups = {}
    for name, (registry, package, *_) in SERVERS.items():
        if registry == 'npm': groups.setdefault(NPM_GROUP.get(name, 'main'), []).append(f'{package}@{NPM_PIN[name]}' if name in NPM_PIN else package)
    lines = ['set -e', f'mkdir -p {venvs}',
             '# --ignore-scripts: no browser or native-module downloads (only registries are reachable, and listing tools needs none)']
    for group, packages in groups.items():
        lines.append(f'mkdir -p {npm_root}/{group} && cd {npm_root}/{group} && ([ -f package.json ] || npm init -y >/dev/null) && '
                     f'PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --ignore-scripts --no-audit --no-fund {" ".join(packages)}')
    for name, (registry, package, _, _, *pins) in SERVERS.items():
        if registry != 'pypi': continue
        reqs = ' '.join(shlex.quote(r) for r in (package, *(pins[0] if pins else ())))
        lines.append(f'[ -d {venvs}/{name} ] || {python} -m venv {venvs}/{name}; {venvs}/{name}/bin/pip install -q {reqs}')
    return '\n'.join(lines)

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('names', nargs='*', help='servers to collect (default: all in SERVERS)')
    p.add_argument('--npm-root', type=Path, default=Path('/tmp/mcp-npm'), help='folder with the npm servers, in one npm project per group')
    p.add_argument('--venvs', type=Path, default=Path('/tmp/mcp-venvs'), help='folder with a venv for each PyPI server, named as the server')
    p.add_argument('--timeout', type=float, default=30, help='seconds for one server to start and list its tools')
    p.add_argument('--out', type=Path, default=OUT)
    p.add_argument('--python', default='python3.12', help='the Python that --install-commands makes the venvs with')
    p.add_argument('--install-commands', action='store_true', help='print the shell commands that install the servers, and stop')
    a = p.parse_args(argv)
    if a.install_commands: return print(install_commands(a.npm_root, a.venvs, a.python))
    logging.getLogger('mcp').setLevel(logging.CRITICAL)  # a server that prints non-JSON to stdout is not news here
    a.out.mkdir(parents=True, exist_ok=True)
    prepare_scratch()
    failed = {}
    for name in a.names or SERVERS:
        try: print(f"{name}: {collect(name, a.npm_root, a.venvs, a.timeout, a.out)} tools", flush=True)
        except Exception as e:
            failed[name] = str(e)
            print(f"{name}: FAILED {e}", flush=True)
    update_readme(a.out)
    if failed: print(f"\n{len(failed)} failed: {', '.join(failed)}")
    return 1 if failed else 0

if __name__ == '__main__': sys.exit(main())
