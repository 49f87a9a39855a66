"""The `funccall` command (also `python -m funccall`): thin; all the work is done by the library's modules.

    funccall                                  schemas of the bundled example tools
    funccall schema TARGET [--format F] [--strict] [--rename]
    funccall call TARGET 'JSON'               run one call as a model's tool call would run
    funccall check TARGET                     lint tools before shipping them; exit 1 on findings
    funccall mcp serve TARGET...              serve TARGET's tools over MCP (stdio)
    funccall mcp list COMMAND...              list an MCP server's tools as schemas

TARGET is a module (its public functions that have docstrings), `module:function`, `module:object`, or a path to
a `.py` file with an optional `:name`.
"""
from __future__ import annotations

import argparse, importlib, importlib.util, inspect, json, re, sys, warnings
from pathlib import Path

from . import providers
from .call import call_func, error_text
from .schema import SchemaError, SchemaWarning, get_schema
from .tools import to_text

__all__ = ['main', 'load_target', 'TargetError']

EXAMPLE = 'funccall.example'
FORMATS = {'canonical': None, 'openai': providers.to_openai, 'responses': providers.to_openai_responses,
           'anthropic': providers.to_anthropic, 'gemini': providers.to_gemini, 'mcp': providers.to_mcp}

class TargetError(Exception):
    "A TARGET on the command line that can't be loaded"

def _import(spec: str):
    if spec.endswith('.py') or '/' in spec:
        p = Path(spec)
        if not p.is_file(): raise TargetError(f"no such file: {spec}")
        nm = f"_funccall_file_{re.sub(r'[^0-9a-zA-Z_]', '_', str(p.resolve()))}"  # never `json` or another file's module
        mspec = importlib.util.spec_from_file_location(nm, p)
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[nm] = mod  # annotations are resolved in the module's namespace, found through `sys.modules`
        try: mspec.loader.exec_module(mod)
        except Exception as e: raise TargetError(f"can't load {spec}: {type(e).__name__}: {e}") from None
        return mod
    try: return importlib.import_module(spec)
    except Exception as e: raise TargetError(f"can't import {spec!r}: {e}") from None

def load_target(
    target: str,  # `module`, `module:name`, `path/to/file.py` or `path/to/file.py:name`
    documented: bool=True,  # of a module, only the functions with docstrings (`check` wants them all)
) -> list:        # the tools: the named object, or a module's public functions
    "The tools TARGET names"
    mod_spec, _, nm = target.rpartition(':') if re.search(r':[A-Za-z_][\w.]*$', target) else (target, '', '')
    mod = _import(mod_spec)
    if nm:
        obj = mod
        for part in nm.split('.'):
            try: obj = getattr(obj, part)
            except AttributeError: raise TargetError(f"{mod_spec!r} has no {nm!r}") from None
        return [obj]
    names = getattr(mod, '__all__', None) or [k for k in vars(mod) if not k.startswith('_')]
    return [o for k in names if inspect.isfunction(o := getattr(mod, k, None)) and o.__module__ == mod.__name__
            and (o.__doc__ or not documented)]

def _tools(target: str, documented: bool=True) -> list:
    fs = load_target(target, documented)
    if not fs: raise TargetError(f"{target!r} has no public functions with docstrings")
    return fs

# --- schema ---------------------------------------------------------------------------------------------

def _schema_cmd(args) -> int:
    fs = _tools(args.target)
    render = FORMATS[args.format]
    if render is None:
        if args.strict: return _fail("--strict needs a provider --format (openai, responses)")
        out = [get_schema(f, evalable=True) for f in fs]
    else:
        rep = providers.Report()
        kw = {'rename': args.rename, 'report': rep}
        if args.format in ('openai', 'responses'): kw['strict'] = args.strict
        elif args.strict: return _fail(f"--strict applies to openai and responses, not {args.format}")
        out = render(fs, **kw)
        for c in rep: print(f"note: {c}{' (lost)' if c.lossy else ''}", file=sys.stderr)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0

# --- call -----------------------------------------------------------------------------------------------

def _call_cmd(args) -> int:
    fs = _tools(args.target)
    if len(fs) > 1: raise TargetError(f"{args.target!r} holds {len(fs)} tools; name one as module:function")
    try: json.loads(args.json)
    except ValueError as e: return _fail(f"the arguments are not valid JSON: {e}")
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

def _check_tool(f) -> tuple[list[str], list[str]]:
    "Findings (problems to fix) and notes (what renderers would change without loss) for one tool"
    findings, notes = [], []
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        try: s = get_schema(f, evalable=True)
        except SchemaError as e: return [str(e)], []
    findings += [str(w.message) for w in ws if issubclass(w.category, SchemaWarning)]
    findings += _undescribed(s)
    if not _openai_name.match(s['name']): findings.append(f"name {s['name']!r} breaks OpenAI's and Anthropic's rule ^[a-zA-Z0-9_-]{{1,64}}$")
    for fmt in ('openai', 'responses', 'anthropic', 'gemini', 'mcp'):
        rep = providers.Report()
        try: FORMATS[fmt](s, rename=True, report=rep)
        except SchemaError as e:
            findings.append(f"{fmt}: {e}"); continue
        for c in rep: (findings if c.lossy else notes).append(f"{fmt}: {c.path or '(tool)'}: {c.what}")
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

def _mcp_serve_cmd(args) -> int: return _mcp().main(['serve', *args.targets])

def _mcp_list_cmd(args) -> int:
    mcp = _mcp()
    try:
        with mcp.MCPClient(args.command, timeout=args.timeout) as c: out = c.schemas()
    except Exception as e: return _fail(f"can't list the tools of {' '.join(args.command)!r}: {type(e).__name__}: {e}")
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0

# --- the parser -----------------------------------------------------------------------------------------

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
    sub = ap.add_subparsers(dest='cmd')
    target_help = 'module, module:function, module:object, or path/to/file.py[:name]'
    sp = sub.add_parser('schema', help='print the JSON tool definitions of TARGET', formatter_class=fmt,
                        epilog='examples:\n  funccall schema funccall.example\n  funccall schema tools.py:search --format openai --strict')
    sp.add_argument('target', nargs='?', default=EXAMPLE, help=f'{target_help} (default: {EXAMPLE})')
    sp.add_argument('--format', choices=list(FORMATS), default='canonical', help='provider format (default: canonical JSON Schema)')
    sp.add_argument('--strict', action='store_true', help='OpenAI strict mode (openai, responses)')
    sp.add_argument('--rename', action='store_true', help="rewrite tool names the provider doesn't accept")
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
    sp = msub.add_parser('serve', help="serve TARGETs' tools over stdin/stdout", formatter_class=fmt,
                         epilog='examples:\n  funccall mcp serve mytools.py\n  funccall mcp serve funccall.example')
    sp.add_argument('targets', nargs='+', metavar='TARGET', help=target_help)
    sp.set_defaults(run=_mcp_serve_cmd)
    sp = msub.add_parser('list', help="print an MCP server's tools as JSON schemas", formatter_class=fmt,
                         epilog='examples:\n  funccall mcp list mcp-server-time\n  funccall mcp list python -m mcp_server_fetch')
    sp.add_argument('command', nargs=argparse.REMAINDER, help='the command that starts the server (stdio), or an http(s) URL')
    sp.add_argument('--timeout', type=float, default=30, help='seconds to wait for the server (default: 30)')
    sp.set_defaults(run=_mcp_list_cmd)
    return ap

def main(argv: list[str] | None = None) -> int:
    "Run the `funccall` command line"
    argv = sys.argv[1:] if argv is None else argv
    ap = _parser()
    if not argv or argv[0] not in ('schema', 'call', 'check', 'mcp', '-h', '--help'): argv = ['schema', *argv]
    args = ap.parse_args(argv)
    if args.cmd == 'mcp' and args.mcp_cmd == 'list' and not args.command: return _fail("mcp list needs the server's command")
    try: return args.run(args)
    except (TargetError, SchemaError) as e: return _fail(str(e))
