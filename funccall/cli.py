"""The `funccall` command: thin; all the work is done by the library's modules.

    funccall                            schemas of the bundled example tools
    funccall schema TARGET              schemas of TARGET's tools, as JSON
"""
from __future__ import annotations

import argparse, importlib, importlib.util, inspect, json, sys
from pathlib import Path

from .schema import get_schema

__all__ = ['main', 'load_target']

EXAMPLE = 'funccall.example'

class TargetError(Exception):
    "A TARGET on the command line that can't be loaded"

def _import(spec: str):
    if spec.endswith('.py') or '/' in spec:
        p = Path(spec)
        if not p.is_file(): raise TargetError(f"no such file: {spec}")
        mspec = importlib.util.spec_from_file_location(p.stem, p)
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[p.stem] = mod
        mspec.loader.exec_module(mod)
        return mod
    try: return importlib.import_module(spec)
    except ImportError as e: raise TargetError(f"can't import {spec!r}: {e}") from None

def load_target(
    target: str,  # `module`, `module:name`, `path/to/file.py` or `path/to/file.py:name`
) -> list:        # the tools: the named object, or a module's public functions that have docstrings
    "The tools TARGET names"
    mod_spec, _, nm = target.rpartition(':') if ':' in target else (target, '', '')
    mod = _import(mod_spec)
    if nm:
        obj = mod
        for part in nm.split('.'):
            try: obj = getattr(obj, part)
            except AttributeError: raise TargetError(f"{mod_spec!r} has no {nm!r}") from None
        return [obj]
    names = getattr(mod, '__all__', None) or [k for k in vars(mod) if not k.startswith('_')]
    return [o for k in names if inspect.isfunction(o := getattr(mod, k)) and o.__module__ == mod.__name__ and o.__doc__]

def _schema_cmd(args) -> int:
    print(json.dumps([get_schema(f, evalable=True) for f in load_target(args.target)], indent=2))
    return 0

def main(argv: list[str] | None = None) -> int:
    "Run the `funccall` command line"
    ap = argparse.ArgumentParser(prog='funccall', description='LLM function calling for Python: tool schemas from functions.',
                                 epilog='examples:\n  funccall\n  funccall schema funccall.example:get_weather\n  funccall schema tools.py',
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd')
    sp = sub.add_parser('schema', help='print the JSON tool schemas of TARGET',
                        epilog='TARGET: module, module:function, module:object, or path/to/file.py[:name]')
    sp.add_argument('target', nargs='?', default=EXAMPLE, help=f'what to describe (default: {EXAMPLE})')
    sp.set_defaults(run=_schema_cmd)
    args = ap.parse_args(argv)
    if args.cmd is None: args = ap.parse_args(['schema', *(argv or [])])
    try: return args.run(args)
    except TargetError as e:
        print(f"funccall: {e}", file=sys.stderr)
        return 2
