"""The `funccall` command (also `python -m funccall`): thin; all the work is done by the library's modules.

    funccall                                  schemas of the bundled example tools
    funccall schema TARGET [--format F] [--strict] [--rename]
    funccall call TARGET 'JSON'               run one call as a model's tool call would run
    funccall check TARGET                     lint tools before shipping them; exit 1 on findings
    funccall mcp serve TARGET...              serve TARGET's tools over MCP (stdio)
    funccall mcp list COMMAND...              list an MCP server's tools as schemas

TARGET is a module, `module:function`, `module:object`, or a path to a `.py` file with an optional `:name`. A module
offers what its `__all__` lists (imported or not), else the public functions with docstrings it defines; a `:name`
must be one it offers (`schema -v` says which were taken).
"""
from __future__ import annotations

import argparse, contextlib, difflib, inspect, json, os, re, sys, warnings
from collections.abc import Callable
from typing import Any

from .core._package import VERSION
from .core import providers
from .core._jsonschema import compile_schema
from .core._json import jsonable
from ._load import TargetError, expand, load_target, no_tools
from .core.call import call_func, error_text
from .core._warnings import SchemaWarning
from .core._docs import joined
from .core.schema import SchemaError, get_schema, tool_docs
from .core._types import field_info, signature, type_name
from .loop.results import to_text
from .loop.tools import Tool

__all__ = ['main']

EXAMPLE = 'funccall.example'
FORMATS: dict[str, Callable[..., Any] | None] = {'canonical': None, **providers.RENDERERS}  # --format -> its renderer (None: as is)
STRICT = ('openai', 'openai_responses', 'anthropic')  # the providers with a strict mode
FORMAT_NAMES = 'canonical, openai, responses, anthropic, gemini, mcp'

def _format(v: str) -> str:
    "`--format`'s value, named as `provider_name` names providers: any case, aliases ('claude', 'openai_responses')"
    try: return providers.provider_name(v, tuple(FORMATS))
    except ValueError: raise argparse.ArgumentTypeError(f"unknown format {v[:40]!r}; use one of {FORMAT_NAMES}") from None

def _tools(target: str, documented: bool=True, verbose: bool=False) -> list:
    "The tools `target` names; which of a module's names were taken, and why, said with -v or when there are none"
    notes: list[str] = []
    undoc: list[str] = []
    fs = expand(load_target(target, documented, notes, undoc))
    if not fs: raise no_tools(target, notes, undoc)
    if verbose:
        for n in notes: print(f"note: {n}", file=sys.stderr)
    return [_as_served(f) for f in fs]

def _as_served(f):
    "`f` as a `Tool` when it takes an injected parameter (an `MCPContext`): the tool's pipeline supplies it, never the arguments"
    if isinstance(f, Tool): return f
    try: return Tool(f) if signature(f).injected else f
    except SchemaError: return f  # `schema`, `check` and `call` each say what is wrong with it, their own way

def _contexts(t: Tool) -> dict:
    "An `MCPContext` of no client for each of `t`'s parameters that takes one: the command line has no MCP session"
    if 'funccall.mcp' not in sys.modules: return {}
    from .mcp import MCPContext, context_params
    return {p: MCPContext() for p in context_params(t) if p in t.inject}

# --- schema ---------------------------------------------------------------------------------------------

def _schema_cmd(args) -> int:
    fs = _tools(args.target, verbose=args.verbose)
    if args.strict and args.format not in STRICT:
        return _fail(f"--strict: {args.format} has no strict mode; use --format openai, responses or anthropic")
    if FORMATS[args.format] is None: out = [get_schema(f, evalable=True) for f in fs]
    else: out = _render(fs, args.format, args.strict, args.rename, args.verbose)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0

def _renderer(fmt: str) -> Callable[..., Any]:
    "The renderer of provider `fmt`: callers never ask for 'canonical', the one format `FORMATS` maps to None (nothing to render)"
    return FORMATS[fmt]  # type: ignore[return-value]

def _render(fs: list, fmt: str, strict: bool, rename: bool, verbose: bool) -> list:
    "The definitions of `fs` for provider `fmt`; what was lost noted on stderr always, what changed without loss with -v"
    rep = providers.Report()
    out = _renderer(fmt)(fs, rename=rename, report=rep, **({'strict': True} if strict else {}))
    for c in rep:
        if c.lossy or verbose: print(f"note: {c}{' (lost)' if c.lossy else ''}", file=sys.stderr)
    return out

# --- call -----------------------------------------------------------------------------------------------

def _call_cmd(args) -> int:
    fs = _tools(args.target)
    if len(fs) > 1:
        names = ', '.join(getattr(f, '__name__', type(f).__name__) for f in fs[:10]) + (', ...' if len(fs) > 10 else '')
        raise TargetError(f"{args.target!r} holds {len(fs)} tools ({names}); name one as {args.target.split(':')[0]}:NAME")
    try: json.loads(args.json)
    except ValueError as e: return _fail(f"the arguments are not valid JSON: {e}")
    get_schema(fs[0])  # `call` reaches what `schema` lists: a function it refuses (a type with no schema) is refused here, saying why
    if isinstance(fs[0], Tool):  # its own pipeline: hooks, cache, `max_chars`
        ctxs = _contexts(fs[0])
        if missing := [k for k in fs[0].inject if k not in ctxs]:
            return _fail(f"tool {fs[0].name!r} takes {', '.join(map(repr, missing))}, which the application supplies (injected): "
                         "the command line has no value to give it; call it from your code with injected={...}")
        r = fs[0].execute(args.json, ctxs)
        print(r.text)
        return 0 if r.ok else 1
    try: res = call_func(fs[0], args.json)  # the text as a model sends it: anything but an object is the model's mistake
    except Exception as e:
        print(error_text(e))
        return 1
    print(to_text(res))
    return 0

# --- check ----------------------------------------------------------------------------------------------

_openai_name = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')

def _undescribed(s: dict) -> list[str]:
    "Parameters and class fields whose description is empty"
    params = s['input_schema']
    res = [f"parameter {k!r} has no description" for k, p in params['properties'].items() if not p.get('description')]
    for nm, d in params.get('$defs', {}).items():
        res += [f"field {k!r} of {nm!r} has no description" for k, p in d.get('properties', {}).items() if not p.get('description')]
    return res

def _unannotated(f) -> list[str]:
    "Parameters the model would be told nothing about the type of: no annotation (`self`, `*args`, `**kwargs` aside)"
    try: ps = inspect.signature(f).parameters.values()
    except (TypeError, ValueError): return []
    return [f"parameter {p.name!r} has no type annotation: the model can't tell what to send" for p in ps
            if p.annotation is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in ('self', 'cls')]

def _misfit_defaults(f, s: dict) -> list[str]:
    "Defaults the parameter's own schema refuses: `x: int = 'five'`, or `tags: list[str] = None` without `| None`"
    params, res = s['input_schema'], []
    for k, p in params['properties'].items():
        if 'default' not in p: continue
        own = {x: v for x, v in p.items() if x not in ('default', 'description')}
        try: v = jsonable(p['default'])
        except TypeError: continue  # a default JSON can't hold is reported by the renderers
        if not (problems := compile_schema({**own, '$defs': params.get('$defs', {})}, where=f'Parameter {k!r}').problems(v, limit=1)): continue
        fix = f"; annotate it '{type_name(inspect.signature(f).parameters[k].annotation)} | None'" if v is None else ''
        res.append(f"parameter {k!r}: the default {p['default']!r:.40} doesn't fit its annotation ({problems[0].message}){fix}")
    return res

def _unhonoured(f, s: dict) -> list[str]:
    "Idioms funccall reads otherwise than their author may mean: `*args`/`**kwargs` left out, an `Annotated` text that disagrees"
    f = f.fn if isinstance(f, Tool) else f  # a `Tool`'s own function holds the comments and the docstring
    try: ps = inspect.signature(f).parameters.values()
    except (TypeError, ValueError): return []
    props, res = s['input_schema'].get('properties', {}), []
    for p in ps:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in props:
            res.append(f"parameter {'*' if p.kind == p.VAR_POSITIONAL else '**'}{p.name} is not in the schema: the model can't fill it")
    res += _aliases(f, props)
    docs = tool_docs(f)
    for nm in props:  # (a docstring's entry is kept after either, when it says more: never lost, so not flagged)
        comment, text = docs.comments.get(nm), _annotated_text(f, nm)
        if comment and text and joined(comment, text) != comment:
            res.append(f"parameter {nm!r} is described twice: the comment ({comment[:40]!r}) is used, not the Annotated ({text[:40]!r}); "
                       "keep one (README: where descriptions come from)")
    return res

def _aliases(f, props: dict) -> list[str]:
    "Parameters whose pydantic `Field` names an alias: pydantic's `validate_call` takes that name, funccall the parameter's own"
    try: ps = signature(f).params
    except SchemaError: return []
    res = []
    for p in ps:
        for m in getattr(p.anno, '__metadata__', ()):
            if p.name in props and field_info(m) and (alias := m.alias or m.validation_alias):
                res.append(f"parameter {p.name!r}: its Field's alias {str(alias)[:40]!r} is not used: the schema and the call name it "
                           f"{p.name!r}; rename the parameter to use that name")
    return res

def _annotated_text(f, nm: str) -> str | None:
    "The description parameter `nm`'s `Annotated` metadata gives, if any (string annotations resolved)"
    try: t = next(p.anno for p in signature(f).params if p.name == nm)
    except (SchemaError, StopIteration): return None
    for m in getattr(t, '__metadata__', ()):
        if isinstance(m, str): return m
        if isinstance(getattr(m, 'description', None), str): return m.description
    return None

def _check_tool(f) -> tuple[list[str], list[str]]:
    "Findings (problems to fix) and notes (what renderers would change without loss) for one tool"
    findings: list[str] = []
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        try: s = get_schema(f, evalable=True)
        except SchemaError as e: return [str(e), *_unannotated(f)], []
    findings += [str(w.message) for w in ws if issubclass(w.category, SchemaWarning)]
    findings += _unannotated(f) + _misfit_defaults(f, s) + _undescribed(s) + _unhonoured(f, s)
    if not _openai_name.match(s['name']): findings.append(f"name {s['name']!r} breaks OpenAI's and Anthropic's rule ^[a-zA-Z0-9_-]{{1,64}}$")
    for fmt in providers.PROVIDERS:
        rep, label = providers.Report(), 'responses' if fmt == 'openai_responses' else fmt  # as `--format` names it
        try: _renderer(fmt)(s, rename=True, report=rep)
        except SchemaError as e:
            findings.append(f"{label}: {e}"); continue
        for c in rep: (findings if c.lossy else notes).append(f"{label}: {c.path or '(tool)'}: {c.what}")
    strict = providers.Report()
    providers.to_openai(s, strict=True, rename=True, report=strict)
    findings += [f"openai strict: {c.path or '(tool)'}: {c.what}" for c in strict if c.lossy]
    return findings, notes

def _check_cmd(args) -> int:
    n = 0
    for f in _tools(args.target, documented=False):
        nm = getattr(f, '__name__', repr(f))
        findings, notes = _check_tool(f)
        for x in findings: print(f"{nm}: {x}")
        if args.verbose:
            for x in notes: print(f"{nm}: note: {x}")
        n += len(findings)
    print(f"{n} finding{'s' if n != 1 else ''}", file=sys.stderr)
    return 1 if n else 0

# --- mcp ------------------------------------------------------------------------------------------------

def _mcp():
    try: from . import mcp
    except ImportError as e: raise TargetError(str(e)) from None
    return mcp

def _mcp_serve_cmd(args) -> int:
    return _mcp().main(['serve', *args.targets, '--name', args.name, *(['--http', args.http] if args.http else []),
                        '--workers', str(args.workers), *(x for h in args.allow_host for x in ('--allow-host', h)),
                        *(x for o in args.allow_origin for x in ('--allow-origin', o)), '--errors', args.errors,
                        *(x for a in args.trust_proxy for x in ('--trust-proxy', a)),
                        *(x for t in args.task for x in ('--task', t)), *(['--redis', args.redis] if args.redis else [])])

def _mcp_list_cmd(args) -> int:
    mcp = _mcp()
    try:
        with mcp.MCPClient(args.command, timeout=args.timeout) as c: out = c.schemas()
    except Exception as e: return _fail(f"can't list the tools of {' '.join(args.command)!r}: {type(e).__name__}: {e}")
    # a server's names are not the user's to change: those a provider rejects are rewritten
    if FORMATS[args.format] is not None: out = _render(out, args.format, False, True, False)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0

# --- the parser -----------------------------------------------------------------------------------------

@contextlib.contextmanager
def _warnings_shown():
    "Each `SchemaWarning` a command gives (a tool built without a docstring) as one line on stderr, as `note:` lines are"
    shown = set()
    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, SchemaWarning): return old(message, category, filename, lineno, file, line)
        if str(message) not in shown: print(f"warning: {message}", file=sys.stderr)
        shown.add(str(message))
    with warnings.catch_warnings():
        warnings.simplefilter('always', SchemaWarning)
        old, warnings.showwarning = warnings.showwarning, show
        yield

def _fail(msg: str) -> int:
    print(f"funccall: {msg}", file=sys.stderr)
    return 2

def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(prog='funccall', formatter_class=fmt,
                                 description='LLM function calling for Python: tool schemas from functions, and running tool calls.',
                                 epilog='examples:\n  funccall                                   # schemas of the bundled example\n'
                                        '  funccall schema mytools.py --format anthropic\n'
                                        "  funccall call funccall.example:get_weather '{\"city\": \"Lisbon\"}'\n"
                                        '  funccall check mytools.py\n  funccall mcp serve mytools.py')
    ap.add_argument('-V', '--version', action='version', version=f'funccall {VERSION}')
    sub = ap.add_subparsers(dest='cmd')
    target_help = 'module, module:function, module:object, or path/to/file.py[:name]'
    sp = sub.add_parser('schema', help='print the JSON tool definitions of TARGET', formatter_class=fmt,
                        epilog='examples:\n  funccall schema funccall.example\n  funccall schema tools.py:search --format openai --strict')
    sp.add_argument('target', nargs='?', default=EXAMPLE, help=f'{target_help} (default: {EXAMPLE})')
    sp.add_argument('--format', type=_format, default='canonical', metavar='FORMAT',
                    help=f'provider format: {FORMAT_NAMES} (default: canonical JSON Schema)')
    sp.add_argument('--strict', action='store_true', help="the provider's strict mode (openai, responses, anthropic)")
    sp.add_argument('--rename', action='store_true', help="rewrite tool names the provider doesn't accept")
    sp.add_argument('-v', '--verbose', action='store_true', help='also note changes that lose nothing')
    sp.set_defaults(run=_schema_cmd)
    sp = sub.add_parser('call', help='run one tool call and print its result or the model-facing error', formatter_class=fmt,
                        epilog="examples:\n  funccall call funccall.example:get_weather '{\"city\": \"Lisbon\", \"unit\": \"F\"}'")
    sp.add_argument('target', help=f'the tool: {target_help}')
    sp.add_argument('json', help='the arguments, as a JSON object')
    sp.set_defaults(run=_call_cmd)
    sp = sub.add_parser('check', help='lint the tools of TARGET; exit 1 when there are findings', formatter_class=fmt,
                        epilog='reports missing docstrings and descriptions, types that cannot be expressed, defaults JSON cannot\n'
                               "hold, names that break a provider's rules, and what each provider's renderer would change or drop.\n"
                               'examples:\n  funccall check mytools.py\n  funccall check funccall.example -v')
    sp.add_argument('target', help=target_help)
    sp.add_argument('-v', '--verbose', action='store_true', help='also show changes that lose nothing')
    sp.set_defaults(run=_check_cmd)
    mp = sub.add_parser('mcp', help='serve tools over MCP, or list an MCP server\'s tools (needs funccall[mcp])', formatter_class=fmt,
                        epilog='examples:\n  funccall mcp serve mytools.py\n  funccall mcp list python -m mcp_server_time')
    msub = mp.add_subparsers(dest='mcp_cmd', required=True)
    sp = msub.add_parser('serve', help="serve TARGETs' tools over stdio, or streamable HTTP with --http", formatter_class=fmt,
                         epilog='examples:\n  funccall mcp serve mytools.py\n  funccall mcp serve mytools.py --http 127.0.0.1:8000')
    sp.add_argument('targets', nargs='+', metavar='TARGET', help=target_help)
    sp.add_argument('--name', default='funccall', help='the server name clients see (default: funccall)')
    sp.add_argument('--http', metavar='HOST:PORT', help='serve streamable HTTP at http://HOST:PORT/mcp instead of stdio')
    sp.add_argument('--workers', type=int, default=1, metavar='N', help="with --http: N worker processes (uvicorn's), stateless")
    sp.add_argument('--allow-host', action='append', default=[], metavar='HOST', help='with --http: accept this Host header too (repeatable)')
    sp.add_argument('--allow-origin', action='append', default=[], metavar='ORIGIN', help='with --http: accept this Origin too (repeatable)')
    sp.add_argument('--trust-proxy', action='append', default=[], metavar='ADDR',
                    help="with --http: a proxy (address, network or '*') whose X-Forwarded-For names the client (repeatable); default: none")
    sp.add_argument('--errors', choices=('type', 'message'), default='type',
                    help="what an error result says of a tool's own exception: its type (default), or type and message")
    sp.add_argument('--task', action='append', default=[], metavar='TOOL', help='serve this long-running tool as an MCP task (repeatable)')
    sp.add_argument('--redis', metavar='URL', help='keep tasks and used answers in this Redis (redis://HOST:PORT/DB), shared by workers')
    sp.set_defaults(run=_mcp_serve_cmd)
    sp = msub.add_parser('list', help="print an MCP server's tools as JSON schemas", formatter_class=fmt,
                         epilog='examples:\n  funccall mcp list mcp-server-time\n  funccall mcp list python -m mcp_server_fetch')
    sp.add_argument('command', nargs=argparse.REMAINDER, help='the command that starts the server (stdio), or an http(s) URL')
    sp.add_argument('--timeout', type=float, default=30, help='seconds to wait for the server (default: 30)')
    sp.add_argument('--format', type=_format, default='canonical', metavar='FORMAT',
                    help=f'provider format: {FORMAT_NAMES} (default: the schemas as the server lists them)')
    sp.set_defaults(run=_mcp_list_cmd)
    return ap

_COMMANDS = ('schema', 'call', 'check', 'mcp')

def _unknown_command(argv: list[str]) -> str | None:
    "The error for a mistyped (sub)command, naming the closest one; `None` when `argv` reads as meant"
    where: tuple[str, ...]
    if argv[:1] == ['mcp']: words, where = argv[1:2], ('serve', 'list')
    else: words, where = argv[:1], _COMMANDS
    if not words or words[0].startswith('-') or words[0] in where: return None
    w, close = words[0], difflib.get_close_matches(words[0], where, n=1)
    if where is _COMMANDS and (not close or set(w) & set('./:\\')): return None  # a TARGET: `funccall mytools.py`
    return f"unknown command {w[:40]!r}" + (f"; did you mean {close[0]!r}?" if close else f"; use one of: {', '.join(where)}")

def main(argv: list[str] | None = None) -> int:
    "Run the `funccall` command line"
    argv = sys.argv[1:] if argv is None else argv
    ap = _parser()
    if err := _unknown_command(argv): return _fail(err)
    if not argv or argv[0] not in (*_COMMANDS, '-h', '--help', '-V', '--version'): argv = ['schema', *argv]  # `funccall mytools.py`
    args = ap.parse_args(argv)
    if args.cmd == 'mcp' and args.mcp_cmd == 'list' and not args.command: return _fail("mcp list needs the server's command")
    try:
        with _warnings_shown(): return args.run(args)
    except (TargetError, SchemaError) as e: return _fail(str(e))
    except BrokenPipeError:  # `funccall schema ... | head`: the reader left; say nothing more, not even at exit's flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
