"""Loading the tools a user names on the command line: `module`, `module:name`, `path/to/file.py[:name]`.

A `:name` is read with the rules `call_func` applies to a model's tool names (`resolve_nm`): no segment starting
with `_`, nothing reached through a module, no method of a builtin value. Naming a target is less hostile than a
model's call, but `funccall call tools.py:_ORDERS.clear '{}'` must not clear a private list either, and an error
must never print the objects it found on the way.
"""
from __future__ import annotations

import contextlib, difflib, importlib, importlib.util, inspect, itertools, os, re, sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .core._ns import ToolNotFound, resolve_nm
from .core.providers import printable
from .core._types import SchemaError
from .loop.tools import Tool, ToolGroup, Toolbox

__all__ = ['TargetError', 'load_target', 'expand', 'no_tools']

class TargetError(Exception):
    "A target on the command line that can't be loaded: the message is one line, for the user"

@contextlib.contextmanager
def _on_path(folder: str):
    "`folder` first on `sys.path` while a target loads, as `python file.py` and `python -m` put it, so its neighbours import"
    # the `funccall` console script starts with its own bin folder on the path, not the user's: without this,
    # `imp.py` holding `from shoptools import search` fails where `python imp.py` works
    sys.path.insert(0, folder)
    try: yield
    finally:
        with contextlib.suppress(ValueError): sys.path.remove(folder)

def _folder(spec: str, p: Path) -> TargetError:
    """The error for folder `p` as a target: what to pass instead (its package by name, or its `.py` files); the names,
    anyone's (a cloned repository's), are printed escaped: none moves the cursor or ends the line"""
    here, names = p.resolve(), []
    for f in itertools.islice(p.iterdir(), 10_000):  # (a huge folder is not read to its end)
        if f.suffix == '.py' and not f.name.startswith('_') and f.is_file(): names.append(f.name)
    files = [printable(str(p / n) if spec not in ('.', './') else n, 200) for n in sorted(names)]
    hint = f"one of its .py files ({', '.join(files[:5])}{', ...' if len(files) > 5 else ''})" if files else ''
    if (here / '__init__.py').is_file() and here.name.isidentifier():  # a package: by its module name, from the folder above it
        where = '' if here.parent == Path.cwd().resolve() else f" from {printable(str(here.parent), 200)}"
        hint = f"the package as a module, {here.name!r}{where}" + (f", or {hint}" if hint else '')
    return TargetError(f"{spec!r} is a folder; a target is a .py file or a module: pass {hint or 'a .py file (this folder holds none)'}")

def _import(spec: str):
    "The module `spec` names: a dotted module name (found from the current folder too), or a path to a `.py` file"
    if spec.endswith('.py') or '/' in spec or os.sep in spec or spec.strip('.') == '':
        p = Path(spec)
        if p.is_dir(): raise _folder(spec, p)
        if not p.is_file(): raise TargetError(f"no such file: {spec}")
        nm = f"_funccall_file_{re.sub(r'[^0-9a-zA-Z_]', '_', str(p.resolve()))}"  # never `json` or another file's module
        mspec = importlib.util.spec_from_file_location(nm, p)
        if mspec is None or mspec.loader is None: raise TargetError(f"can't load {spec}: not a Python file (a .py file, or a module name)")
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[nm] = mod  # annotations are resolved in the module's namespace, found through `sys.modules`
        try:
            with _on_path(str(p.resolve().parent)): mspec.loader.exec_module(mod)
        except Exception as e:
            sys.modules.pop(nm, None)
            raise TargetError(f"can't load {spec}: {type(e).__name__}: {str(e)[:200]}") from None
        return mod
    try:
        with _on_path(os.getcwd()): return importlib.import_module(spec)
    except Exception as e: raise TargetError(f"can't import {spec!r}: {str(e)[:200]}") from None

def _is_collection(o) -> bool:
    "A `Toolbox`, `ToolGroup`, or list of tools: a target that holds tools rather than being one"
    return isinstance(o, (list, tuple, Toolbox, ToolGroup))

def _exported(mod) -> list | None:
    "The names the module's `__all__` lists, or None when it has none"
    names = getattr(mod, '__all__', None)
    return [k for k in names if isinstance(k, str)] if isinstance(names, (list, tuple)) else None

def _its_own(mod, o) -> bool:
    "Whether `o` belongs to module `mod`: a function or class defined there, or any other value (an object, a Toolbox) set there"
    if inspect.isfunction(o) or isinstance(o, type): return getattr(o, '__module__', None) == mod.__name__
    return not inspect.ismodule(o) and not inspect.isbuiltin(o)

def _offered(mod, nm: str) -> bool:
    "Whether the module offers name `nm` as a tool: its `__all__` lists it, or (without one) it is the module's own"
    names = _exported(mod)
    return nm in names if names is not None else _its_own(mod, vars(mod).get(nm))

def _named(mod, spec: str, nm: str) -> list:
    ns = vars(mod)
    head = nm.split('.')[0]
    if head in ns and not head.startswith('_') and not _offered(mod, head):  # `tools.py:BaseModel`: imported there, not offered
        why = "its __all__ doesn't list it" if _exported(mod) is not None else 'it is imported there, not defined there'
        raise TargetError(f"{head[:80]!r} in {spec!r} is not one of its tools ({why}); list it in the module's __all__ to offer it")
    if '.' not in nm and not nm.startswith('_') and _is_collection(o := ns.get(nm)): return [o]
    try: f = resolve_nm(nm, ns)
    except ToolNotFound as e:
        if '.' not in nm and not nm.startswith('_') and nm in ns:  # there, but not a tool: say what it is, suggest nothing
            raise TargetError(f"{nm[:80]!r} in {spec!r} is a {type(ns[nm]).__name__}, not a tool "
                              "(a public function, callable object, method, Toolbox, tool group or list of tools)") from None
        tools = [k for k in e.available if '.' not in k] + [k for k, v in ns.items() if isinstance(k, str) and _is_collection(v)]
        close = difflib.get_close_matches(nm, tools, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ''
        why = ("names starting with '_' are private" if any(p.startswith('_') for p in nm.split('.'))
               else 'a tool is a public function, callable object or method defined there')
        raise TargetError(f"{spec!r} has no tool {nm[:80]!r} ({why}){hint}") from None
    if '.' not in nm or isinstance(f, Tool): return [f]
    # a method reached through an object is a tool under its whole name, as a `ToolGroup` names it: `svc.run` is `svc-run`
    try: return [Tool(f, name=nm.replace('.', '-'))]
    except SchemaError: return [f]  # a type with no schema: `check` reports that as a finding, the other commands when they read it

def load_target(
    target: str,            # `module`, `module:name`, `path/to/file.py` or `path/to/file.py:name`
    documented: bool=True,  # of a module without `__all__`, only the functions with docstrings (`check` wants them all)
    notes: list[str] | None=None,  # a list to add a line to saying which of a module's names were taken, and why
    undocumented: list[str] | None=None,  # a list to add the names of the functions left out for want of a docstring to
) -> list:                  # the tools: the named object, or what a module offers
    """The tools `target` names, found with `call_func`'s name rules. A module offers what its `__all__` lists (imported
    or not: functions, callable objects, `Tool`s, toolboxes, tool groups and lists of tools), else the public functions with
    docstrings it defines (there a docstring is what marks a function as a tool, not a helper); a `:name` must be one it offers"""
    mod_spec, _, nm = target.rpartition(':') if re.search(r':[^:/\\]+$', target) else (target, '', '')
    mod = _import(mod_spec)
    if nm: return _named(mod, mod_spec, nm)
    ns, names = vars(mod), _exported(mod)
    if names is not None:
        found = [o for k in names if not k.startswith('_') and _is_tool(o := ns.get(k))]  # listed: offered, documented or not
        skipped = [k for k in names if k.startswith('_') or not _is_tool(ns.get(k))]
        why = f"the {len(found)} tool{'s' if len(found) != 1 else ''} its __all__ lists; not tools: "
    else:
        pub = [o for k, o in ns.items() if not k.startswith('_') and inspect.isfunction(o)]
        found = [o for o in pub if o.__module__ == mod.__name__ and (o.__doc__ or not documented)]
        skipped = [o.__name__ for o in pub if o.__module__ != mod.__name__]
        why = (f"the {len(found)} public function{'s' if len(found) != 1 else ''} it defines (it has no __all__); "
               "imported, offered only when __all__ lists them: ")
    if undocumented is not None and documented and names is None:
        undocumented += [k for k, o in ns.items() if not k.startswith('_') and inspect.isfunction(o) and o.__module__ == mod.__name__
                         and not o.__doc__]
    if notes is not None: notes.append(f"{mod_spec}: {why}{', '.join(skipped[:5]) or 'none'}{', ...' if len(skipped) > 5 else ''}")
    return found

def no_tools(
    target: str,        # the target(s), as the user named them
    notes: list,        # what `load_target` noted of the names it took
    undocumented: list, # the functions `load_target` left out for want of a docstring
) -> TargetError:       # the error naming them, and saying what to do
    "The error for a target that offers no tools: its undocumented functions named, with the fix"
    if not undocumented:
        return TargetError(f"{target!r} has no public functions with docstrings" + (f" (took {notes[0].split(': ', 1)[1]})" if notes else ''))
    shown = ', '.join(undocumented[:10]) + (f', ... ({len(undocumented)} in all)' if len(undocumented) > 10 else '')
    return TargetError(f"{target!r} has no public functions with docstrings: {shown} {'has' if len(undocumented) == 1 else 'have'} none, "
                       "and a module without __all__ offers only the functions it documents; add a docstring saying what each does "
                       "(the model reads it to decide when to call the tool), or list them in the module's __all__ (offered with no "
                       f"description), best as Tool(f, description='...'); `funccall check {target}` lists what else each lacks")

def _is_tool(o) -> bool:
    "A value `__all__` may offer as a tool: a function, a `Tool`, a collection of tools, or a callable object (not a class)"
    if isinstance(o, (list, tuple)): return bool(o) and all(callable(x) or _is_collection(x) for x in o)  # not a list of names
    return inspect.isfunction(o) or isinstance(o, Tool) or _is_collection(o) or (callable(o) and not isinstance(o, type) and not inspect.isbuiltin(o))

def expand(
    objs: Sequence[Any],  # what `load_target` gave: functions, callable objects, `Tool`s, and `Toolbox`es, `ToolGroup`s and lists of them
) -> list:       # the tools one by one
    "Each tool on its own: the tools of a `Toolbox`, `ToolGroup` or list in their place"
    res = []
    for o in objs:
        if isinstance(o, Toolbox): res += list(o)
        elif isinstance(o, ToolGroup): res += list(o.tools.values())
        elif isinstance(o, (list, tuple)): res += expand(o)
        else: res.append(o)
    return res
