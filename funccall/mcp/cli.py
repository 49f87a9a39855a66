"""Serving from the command line, and the serving loop behind `serve`: `funccall mcp serve TARGET ... [--http HOST:PORT
[--workers N] [--allow-host H] [--allow-origin O] [--trust-proxy ADDR]] [--errors type|message] [--task TOOL] [--redis URL]` (or `python -m
funccall.mcp serve ...`). Over stdio, whatever the tools (or their modules, as they load) print goes to stderr; over
HTTP uvicorn serves, in one process or `--workers N`, each loading the tools itself from a config handed to it
pickled (`funccall.mcp._worker`)."""
from __future__ import annotations

import argparse, os, secrets, socket, sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

try:
    import anyio
    from mcp.server import Server
    from mcp.server.stdio import stdio_server
except ImportError as _e:  # `mcp` is an optional extra; mcp 1.x lacks `Client` and `mcp_types`
    raise ImportError(f"funccall.mcp needs the MCP SDK 2.x ({_e}): pip install 'funccall[mcp]'") from _e

from ._state import SECRET_ENV
from ._store import RedisStore
from ._worker import WorkerApp
from .._load import TargetError, load_target, no_tools
from ..core._types import SchemaError
from .server import ERRORS, ServedTools, mk_asgi_app, mk_server
from ..core._typing import JsonDict
from ..core._helpdoc import add_param_docs

__all__ = ['serve', 'main']

@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    "Send what Python code and child processes write to stdout to stderr instead: over stdio, stdout carries the protocol"
    sys.stdout.flush()
    saved, old = os.dup(1), sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try: yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        sys.stdout = old

async def _serve_stdio(server: Server[Any]) -> None:
    # the SDK points fd 1 at stderr while it serves; `sys.stdout` too, so a tool's `print` never reaches the protocol
    async with stdio_server() as (r, w):
        old, sys.stdout = sys.stdout, sys.stderr
        try: await server.run(r, w, server.create_initialization_options())
        finally: sys.stdout = old

def _host_port(http: str) -> tuple[str, int]:
    host, _, port = http.rpartition(':')
    if not port.isdigit(): raise ValueError(f"--http takes HOST:PORT, e.g. 127.0.0.1:8000, not {http!r}")
    return host.strip('[]') or '127.0.0.1', int(port)

# seconds an idle kept-alive connection stays open: longer than clients keep one for reuse (httpx 5 s, aiohttp 15 s), so
# the client always closes it first; at uvicorn's 5 s an httpx client reusing it just as the server closed it got `ReadError('')`
_KEEP_ALIVE = 30

def _proxies(trust_proxy: Iterable[str]) -> JsonDict:
    """uvicorn's settings for proxy headers: off unless proxies are named, since uvicorn by default takes `X-Forwarded-For`
    from 127.0.0.1 and ::1, so any local process could claim any address (and a fresh share of answers per claim)"""
    import ipaddress
    for a in trust_proxy:  # (uvicorn would take a mistyped one as a name no client has, silently)
        try:
            if a != '*': ipaddress.ip_network(a, strict=False)
        except ValueError: raise ValueError(f"--trust-proxy takes an address, a network (10.0.0.0/8) or '*', not {a!r:.80}") from None
    return {'proxy_headers': bool(trust_proxy), 'forwarded_allow_ips': list(trust_proxy) or None}

def _run(server: Server[Any] | JsonDict, http: str | None, allow_hosts: Iterable[str]=(), allow_origins: Iterable[str]=(), workers: int=1,
         trust_proxy: Iterable[str]=()) -> None:
    "Serve `server` (a `Server`, or with `workers` > 1 the config each worker loads) over stdio or streamable HTTP"
    if http is None: return anyio.run(_serve_stdio, server)  # type: ignore[arg-type]  # (a config only with workers, over HTTP)
    import uvicorn  # the MCP SDK's own dependency for HTTP
    host, port = _host_port(http)
    where = f'[{host}]' if ':' in host else host  # an IPv6 address
    name = server['name'] if isinstance(server, dict) else server.name  # (with `workers`, the config each worker loads)
    print(f"funccall mcp: serving {name!r} over streamable HTTP at http://{where}:{port}/mcp (Ctrl-C stops)", file=sys.stderr)
    try:
        if workers > 1:
            cfg = {**server, 'host': host, 'allow_hosts': list(allow_hosts), 'allow_origins': list(allow_origins)}  # type: ignore[dict-item]
            _run_workers(uvicorn, cfg, port, workers, trust_proxy)  # (with workers, `server` is the config)
        else: uvicorn.run(mk_asgi_app(server, host, allow_hosts, allow_origins), host=host, port=port, log_level='warning',
                          timeout_keep_alive=_KEEP_ALIVE, **_proxies(trust_proxy))
    except KeyboardInterrupt: pass

def _run_workers(uvicorn: Any, cfg: JsonDict, port: int, workers: int, trust_proxy: Iterable[str]=()) -> None:
    "uvicorn's worker processes, each loading the tools itself from `cfg`, which reaches it pickled, never in the environment"
    from uvicorn.supervisors import Multiprocess
    config = uvicorn.Config(WorkerApp(cfg), factory=True, host=cfg['host'], port=port, workers=workers, log_level='warning',
                            timeout_keep_alive=_KEEP_ALIVE, **_proxies(trust_proxy))
    Multiprocess(config, sockets=[_listen(cfg['host'], port)]).run()  # (what `uvicorn.run` does with workers, which takes only an import string)

def _listen(host: str, port: int) -> socket.socket:
    """The socket the workers accept on, made as `uvicorn.Config.bind_socket` makes it but with its protocol named
    (IPPROTO_TCP): asyncio sets TCP_NODELAY only on connections whose socket says TCP, and uvicorn's says 0, so every
    reply waited out Nagle's algorithm against the client's delayed ACK (40 ms on Linux: a p50 of 45 ms with --workers)"""
    s = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.set_inheritable(True)
    return s

def serve(
    tools: ServedTools,     # the tools, as `mk_server` takes them
    name: str='funccall',   # the server's name, as clients see it
    http: str | None=None,  # 'HOST:PORT' to serve streamable HTTP at http://HOST:PORT/mcp; default: stdio
    injected: JsonDict | None=None,  # the application's values for the tools' injected parameters
    allow_hosts: Iterable[str]=(),  # more Host header values to accept over HTTP (loopback names always are)
    allow_origins: Iterable[str]=(),  # more Origin header values to accept over HTTP
    errors: Literal['type', 'message']='type',  # what an error result says of a tool's own exception: 'type' only, or 'message' (type and message)
    trust_proxy: Iterable[str]=(),  # over HTTP, the proxies (addresses, or '*') whose X-Forwarded-For names the client; default: none
) -> None:
    "Serve `tools` as an MCP server over stdin/stdout until the client hangs up, or over streamable HTTP until stopped"
    _run(mk_server(tools, name, injected, errors=errors), http, allow_hosts, allow_origins, trust_proxy=trust_proxy)

# --- the command line ---------------------------------------------------------------------------------

def _take_secret() -> str | None:
    """The secret in the environment, taken out of it: out of `os.environ`, so no subprocess a tool starts inherits it,
    and its bytes overwritten where the C library keeps them, which on Linux is the process's starting environment that
    `/proc/PID/environ` shows any process of the same user (a tool's subprocess reading its parent's, say)"""
    _wipe_env(SECRET_ENV)
    return os.environ.pop(SECRET_ENV, None) or None

def _wipe_env(name: str) -> None:
    "Overwrite the C library's copy of environment variable `name`'s value with zero bytes (Python's own copy is left)"
    import ctypes
    try:
        libc = ctypes.CDLL(None)  # this process's C library
        libc.getenv.restype = ctypes.c_void_p
    except (OSError, TypeError, AttributeError): return  # no C library to reach (Windows): nothing shows its environment
    if p := libc.getenv(name.encode()): ctypes.memset(p, 0, len(ctypes.string_at(p)))

def main(
    argv: list[str] | None = None,  # the arguments after `python -m funccall.mcp` (default: `sys.argv[1:]`)
) -> int:                           # the exit status
    "Run `python -m funccall.mcp serve TARGET ... [--http HOST:PORT] [--workers N] [--allow-host H] [--allow-origin O] [--trust-proxy A]`"
    ap = argparse.ArgumentParser(prog='python -m funccall.mcp', description='Serve Python functions as an MCP server.')
    sub = ap.add_subparsers(dest='cmd', required=True)
    sp = sub.add_parser('serve', help="serve TARGETs' tools over stdio, or streamable HTTP",
                        epilog='TARGET: module (its public documented functions), module:name, or path/to/file.py[:name]')
    sp.add_argument('targets', nargs='+', metavar='TARGET', help='where the tools are')
    sp.add_argument('--name', default='funccall', help='the server name clients see (default: funccall)')
    sp.add_argument('--http', metavar='HOST:PORT', help='serve streamable HTTP at http://HOST:PORT/mcp instead of stdio')
    sp.add_argument('--workers', type=int, default=1, metavar='N', help='with --http: N worker processes (uvicorn\'s), stateless')
    sp.add_argument('--allow-host', action='append', default=[], metavar='HOST', help='with --http: accept this Host header too (repeatable)')
    sp.add_argument('--allow-origin', action='append', default=[], metavar='ORIGIN', help='with --http: accept this Origin too (repeatable)')
    sp.add_argument('--trust-proxy', action='append', default=[], metavar='ADDR',
                    help="with --http: a proxy (address, network or '*') whose X-Forwarded-For names the client (repeatable); default: none")
    sp.add_argument('--errors', choices=ERRORS, default='type',
                    help="what an error result says of a tool's own exception: its type (default), or type and message")
    sp.add_argument('--task', action='append', default=[], metavar='TOOL', help='serve this long-running tool as an MCP task (repeatable)')
    sp.add_argument('--redis', metavar='URL', help='keep tasks and used answers in this Redis (redis://HOST:PORT/DB), shared by workers')
    args = ap.parse_args(argv)
    secret = _take_secret()  # before any tool loads
    try:
        if args.workers < 1 or (args.workers > 1 and not args.http): raise ValueError("--workers takes a number >= 1, with --http")
        if args.task and args.workers > 1 and not args.redis:
            raise ValueError("--task with --workers needs --redis URL: every worker must see every task")
        if args.http: _host_port(args.http)
        if args.trust_proxy and not args.http: raise ValueError("--trust-proxy is for --http")
        _proxies(args.trust_proxy)
        with _stdout_to_stderr():  # what the tools' modules print as they load must not reach the protocol
            undoc: list[str] = []
            fs = [f for t in args.targets for f in load_target(t, undocumented=undoc)]
        if not fs: raise no_tools(' '.join(args.targets), [], undoc)
        store = RedisStore(args.redis) if args.redis else None
        # with workers too: a mistake in the tools shows here, once
        server: Server[Any] | JsonDict = mk_server(fs, args.name, secret=secret, errors=args.errors, tasks=args.task, store=store)
    except (TargetError, SchemaError, TypeError, ValueError) as e:
        print(f"funccall mcp: {e}", file=sys.stderr)
        return 2
    if args.workers > 1: server = {'targets': args.targets, 'name': args.name, 'secret': secret or secrets.token_hex(32), 'errors': args.errors,
                                   'tasks': args.task, 'redis': args.redis}
    _run(server, args.http, args.allow_host, args.allow_origin, args.workers, args.trust_proxy)
    return 0

# `help()` shows each public parameter's `# comment` (see core/_helpdoc.py)
add_param_docs(globals()[n] for n in __all__)
