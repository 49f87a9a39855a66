"""The installed `funccall` console script, as a user runs it from their project folder: not `python -m funccall`.

`python -m` puts the current folder on `sys.path`; the console script puts its own `bin` folder there instead, so a
target that imports its neighbours (`imp.py` holding `from shoptools import search`) loads only because funccall puts
the target's folder (a file) or the current folder (a module) on the path for the load. Each test runs the script in a
temporary folder holding such modules, for every subcommand that loads targets.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

T = 60  # seconds: a generous bound for one subprocess
SCRIPT = Path(sys.executable).parent / ('funccall.exe' if os.name == 'nt' else 'funccall')

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason='the package is not installed with its console script')

SHOPTOOLS = '''
    from dataclasses import dataclass

    @dataclass
    class Item:
        "A thing the shop sells"
        sku: str      # the stock code
        price: float  # in euros

    def search(
        query: str,     # words to look for
        limit: int = 3, # how many items at most
    ) -> list[Item]:    # the items found
        "Search the shop's catalogue."
        return [Item(f'{query}-{i}', 9.5) for i in range(limit)]
'''
IMP = '''
    from shoptools import search

    def cart_total(
        skus: list[str],  # the stock codes in the cart
    ) -> float:           # the total in euros
        "Total price of a cart."
        return sum(i.price for s in skus for i in search(s, 1))
'''

@pytest.fixture
def shop(tmp_path) -> Path:
    "A project folder: `shoptools.py`, and `imp.py` importing from it"
    (tmp_path / 'shoptools.py').write_text(textwrap.dedent(SHOPTOOLS))
    (tmp_path / 'imp.py').write_text(textwrap.dedent(IMP))
    return tmp_path

def funccall(*args, cwd, **kw) -> subprocess.CompletedProcess:
    "The console script, run in `cwd` with a clean environment (no PYTHONPATH pointing at the project)"
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=T, cwd=cwd, env=env, **kw)

def test_the_script_is_the_installed_entry_point():
    "What makes these tests worth having: the script, not `python -m`, which would put the current folder on the path"
    assert SCRIPT.read_text().startswith('#!') and 'funccall.cli' in SCRIPT.read_text()
    assert shutil.which('funccall', path=str(SCRIPT.parent)) == str(SCRIPT)

@pytest.mark.parametrize('target', ['imp.py', 'imp.py:cart_total', 'imp', 'imp:cart_total'])
def test_schema_of_a_target_importing_its_neighbour(shop, target):
    r = funccall('schema', target, cwd=shop)
    assert r.returncode == 0, r.stderr
    [s] = json.loads(r.stdout)
    assert s['name'] == 'cart_total' and s['input_schema']['properties']['skus']['description'] == 'the stock codes in the cart'

def test_schema_of_a_module_target_in_the_current_folder(shop):
    r = funccall('schema', 'shoptools', '--format', 'anthropic', cwd=shop)
    assert r.returncode == 0, r.stderr
    [s] = json.loads(r.stdout)
    assert s['name'] == 'search'
    assert s['input_schema']['properties']['query']['description'] == 'words to look for'

def test_a_file_target_from_another_folder(shop, tmp_path_factory):
    "A file's own folder goes on the path, wherever the command runs"
    r = funccall('schema', str(shop / 'imp.py'), cwd=tmp_path_factory.mktemp('elsewhere'))
    assert r.returncode == 0, r.stderr
    assert [s['name'] for s in json.loads(r.stdout)] == ['cart_total']

def test_the_path_is_only_for_the_load(shop):
    "The folder is on `sys.path` while the target loads, not after: nothing else the process imports is shadowed"
    code = ("import sys; from funccall._load import load_target; n = len(sys.path); load_target('imp.py'); "
            "print(len(sys.path) == n, 'shoptools' in sys.modules)")
    r = subprocess.run([sys.executable, '-I', '-c', code], capture_output=True, text=True, timeout=T, cwd=shop)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ['True', 'True']

def test_call_of_a_target_importing_its_neighbour(shop):
    r = funccall('call', 'imp.py:cart_total', '{"skus": ["a", "b"]}', cwd=shop)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '19.0'

def test_check_of_a_target_importing_its_neighbour(shop):
    r = funccall('check', 'imp', cwd=shop)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stderr.strip() == '0 findings'

def test_piping_into_head_is_quiet(shop):
    "`funccall schema many.py | head -1`: the reader leaves early; no BrokenPipeError traceback"
    (shop / 'many.py').write_text(''.join(f'def f{i}(x: int) -> int:\n    "Tool {i}."\n    return x\n' for i in range(400)))
    p = subprocess.Popen([str(SCRIPT), 'schema', 'many.py'], cwd=shop, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline() == b'[\n'
    p.stdout.close()  # as `head` does once it has its line
    err = p.stderr.read().decode()
    p.wait(timeout=T)
    assert 'Traceback' not in err and 'BrokenPipe' not in err and err == ''

def test_mcp_serve_a_target_importing_its_neighbour(shop):
    "A real MCP client (the SDK's) starts `funccall mcp serve imp.py` over stdio, initializes and lists the tools"
    pytest.importorskip('mcp')
    import anyio
    from mcp import Client, StdioServerParameters, stdio_client
    params = StdioServerParameters(command=str(SCRIPT), args=['mcp', 'serve', 'imp.py'], cwd=str(shop))
    async def main():
        with open(shop / 'err.txt', 'w') as errlog, anyio.fail_after(T):
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=T) as c:
                return (await c.list_tools()).tools
    [tool] = anyio.run(main)
    assert tool.name == 'cart_total' and tool.input_schema['properties']['skus']['type'] == 'array'

def test_mcp_list_takes_a_format(shop):
    "`funccall mcp list --format openai COMMAND`: the server's tools as a provider takes them (here, our own server)"
    pytest.importorskip('mcp')
    r = funccall('mcp', 'list', '--format', 'openai', str(SCRIPT), 'mcp', 'serve', 'shoptools.py', cwd=shop)
    assert r.returncode == 0, r.stderr
    [d] = json.loads(r.stdout)
    assert d['type'] == 'function' and d['function']['name'] == 'search'
    assert d['function']['parameters']['properties']['query']['description'] == 'words to look for'

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def test_mcp_serve_http_says_where_it_listens(shop):
    pytest.importorskip('mcp')
    port = _free_port()
    p = subprocess.Popen([str(SCRIPT), 'mcp', 'serve', 'imp.py', '--http', f'127.0.0.1:{port}'], cwd=shop,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try: line = p.stderr.readline()
    finally:
        p.terminate()
        p.wait(timeout=T)
        p.stderr.close()
    assert line.strip() == f"funccall mcp: serving 'funccall' over streamable HTTP at http://127.0.0.1:{port}/mcp (Ctrl-C stops)"
