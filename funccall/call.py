"""Run a model's tool call: find the tool in a namespace, coerce its JSON inputs, call it, report failures.

A model's tool call is untrusted input. Names resolve only to what could have been advertised (`_ns`),
inputs are checked and coerced against the annotations (`_coerce`), and every mistake in the call comes
back as `ToolNotFound` (a `LookupError`) or `ToolInputError` (a `ValueError`) naming what was wrong, or, with
`raise_on_err=False`, as a short message for the model. Nothing the model sends reaches outside the namespace.
"""
from __future__ import annotations

import inspect, os, re, traceback, weakref
from types import FunctionType
from typing import Any

from ._coerce import Mismatch, _identity, coercer
from ._inputs import ToolInputError, read_arguments as _inputs, short
from ._run import call_tool, to_thread, is_async as _is_async, run_sync as _run_sync
from ._ns import ToolNotFound, mk_ns, resolve_nm
from ._types import SchemaError, check_caches, constraints, empty, is_callable_object, kind, on_types_changed, signature

__all__ = ['call_func', 'call_func_async', 'coerce_inputs', 'error_text', 'ToolInputError', 'ToolNotFound', 'mk_ns', 'resolve_nm']

_P = inspect.Parameter
_ANY = object()  # in `_Plan.fast`: a parameter that takes any value as it is
_exact = {int: int, str: str, bool: bool, float: float}
_canon_re = re.compile(r'[\W_]+')

def _canon(k: str) -> str: return _canon_re.sub('', k)

class _Plan:
    "How to call one function: its parameters' coercers, defaults and kinds, worked out once"
    __slots__ = ('name', 'params', 'fast', 'n', 'required', 'canon', 'var_kw', 'posonly', 'is_async', '__weakref__')

    def __init__(self, f, name: str):
        self.name = name
        ps = signature(f).params  # a `SchemaError` here is the developer's to fix; `raise_on_err=False` reports it
        self.var_kw = any(p.kind is _P.VAR_KEYWORD for p in ps)
        ps = [p for p in ps if p.kind not in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)]
        # an unannotated parameter accepts anything: its default's type (`None`!) is no rule for what the model may send
        self.params = {p.name: (coercer(p.anno) if p.declared else _identity, p.default, p.kind) for p in ps}
        self.posonly = [p.name for p in ps if p.kind is _P.POSITIONAL_ONLY]
        self.required = frozenset(p.name for p in ps if p.default is empty)
        self.n = len(ps)
        self.is_async = _is_async(f)
        # the parameters a value may skip coercion for, when its type is exactly the annotation
        self.fast = {} if self.is_async or self.posonly else {p.name: t for p in ps if (t := self._fast_type(p)) is not None}
        canon: dict = {}
        for nm in self.params: canon.setdefault(_canon(nm), []).append(nm)
        self.canon = {k: v[0] for k, v in canon.items() if len(v) == 1}

    def _fast_type(self, p):
        "The exact type a value of parameter `p` may have to skip coercion (`_ANY`: any value), or `None`"
        if self.params[p.name][0] is _identity: return _ANY
        info = kind(p.anno)
        if info.meta and constraints(info.meta, 'string'): return None  # a range, length or pattern to check
        return _exact.get(info.t) if info.kind == 'scalar' else None

    def bind(self, inputs: dict, name: str | None=None) -> tuple[list, dict]:
        "Positional and keyword arguments for `inputs`, coerced; raises `ToolInputError` naming the tool as `name`"
        params, kw, seen, tool = self.params, {}, {}, name or self.name
        for k, v in inputs.items():
            if k in params: nm = k
            elif not isinstance(k, str): raise ToolInputError(f"Tool {tool!r}: argument names must be strings, got {short(k, 60)}")
            else: nm = self.canon.get(_canon(k))
            if nm is None:
                if self.var_kw and k not in params: kw[k] = v; continue
                expected = ', '.join(map(repr, params)) or 'none'
                raise ToolInputError(f"Tool {tool!r} got an unexpected argument {short(k, 60)}; its arguments are: {expected}")
            if nm in seen:
                raise ToolInputError(f"Tool {tool!r}: arguments {seen[nm]!r} and {k!r} both name parameter {nm!r}; send it once")
            seen[nm] = k
            c, default, _ = params[nm]
            if v is None and default is not empty: continue  # null means "use the default" (strict mode sends it)
            try: kw[nm] = c(v)
            except Mismatch as e: raise ToolInputError(f"Tool {tool!r}, parameter {_loc(nm, e.path)!r}: {e}") from None
        if not self.required <= kw.keys():
            missing = [nm for nm in params if nm in self.required and nm not in kw]
            raise ToolInputError(f"Tool {tool!r} is missing required argument(s): {', '.join(map(repr, missing))}")
        args = []
        if self.posonly:
            last = max((i for i, nm in enumerate(self.posonly) if nm in kw), default=-1)
            args = [kw.pop(nm) if nm in kw else params[nm][1] for nm in self.posonly[:last + 1]]
        return args, kw

def _fits(plan: _Plan, inputs: dict) -> bool:
    "Whether every argument in `inputs` already has exactly its annotated type, and none is missing"
    fast = plan.fast
    for k, v in inputs.items():
        t = fast.get(k)
        if t is not type(v) and (t is not _ANY or v is None): return False  # null means "use the default"
    return len(inputs) == plan.n or plan.required <= inputs.keys()

def _loc(nm: str, path: tuple) -> str:
    return nm + ''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in path)

# --- plans, cached per function (weakly) --------------------------------------------------------------

_plans: dict = {}  # id(function) -> plan; an entry leaves when its function dies
on_types_changed(_plans.clear)

def _plan_key(f):
    if type(f) is FunctionType: return f
    if inspect.ismethod(f): return f.__func__
    return type(f) if is_callable_object(f) else f

def _plan(f, name: str) -> _Plan:
    key = _plan_key(f)
    hit = _plans.get(id(key))
    if hit is not None and hit[0]() is key: return hit[1]  # one plan per function, whatever name it is called by
    plan = _Plan(f, name)
    try: ref = weakref.ref(key, lambda _, k=id(key): _plans.pop(k, None))
    except TypeError: return plan  # not weakly referenceable: not cached
    _plans[id(key)] = (ref, plan)
    return plan

# --- inputs and names -------------------------------------------------------------------------------

def _resolve(fc_name, ns) -> tuple[Any, str]:
    if isinstance(fc_name, str): return resolve_nm(fc_name, mk_ns(ns) if ns is not None else {}), fc_name
    if callable(fc_name): return fc_name, getattr(fc_name, '__name__', type(fc_name).__name__)
    raise ToolNotFound(repr(fc_name))

def _prepare(fc_name, fc_inputs, ns):
    f, nm = _resolve(fc_name, ns)
    plan = _plan(f, nm)
    args, kw = plan.bind(_inputs(fc_inputs), nm)
    return f, plan, args, kw

# --- failures as text for the model -----------------------------------------------------------------

_pkg_dir = os.path.dirname(__file__)

def _err_text(e: BaseException) -> str:
    "A model-facing report of an exception raised inside a tool: the cause first, then the tool's own frames"
    frames = traceback.extract_tb(e.__traceback__)
    ours = [i for i, fr in enumerate(frames) if os.path.dirname(fr.filename) == _pkg_dir]
    frames = frames[ours[-1] + 1:] if ours else frames
    lines = [traceback.format_exception_only(type(e), e)[-1].strip()]  # the cause (for a SyntaxError, its last line)
    if frames:
        lines.append('Traceback (most recent call last):')
        for fr in frames:
            lines.append(f'  File "{os.path.basename(fr.filename)}", line {fr.lineno}, in {fr.name}')
            if fr.line: lines.append(f'    {fr.line}')
    return '\n'.join(lines)

def error_text(
    e: BaseException,  # a failure of a tool call
) -> str:              # what the model reads
    "A failure as the model should read it: one line for a bad call (or a tool funccall can't describe), the cause and the tool's frames otherwise"
    if isinstance(e, (ToolNotFound, ToolInputError, SchemaError)): return f"{type(e).__name__}: {e}"
    return _err_text(e)

# --- the public calls --------------------------------------------------------------------------------

def coerce_inputs(
    func,          # the tool
    inputs,        # its arguments from the model: a dict or JSON text
    name:str=None, # the tool's name in error messages (default: the function's)
) -> dict:         # the arguments, coerced to `func`'s annotations
    "Check and coerce a model's arguments for `func`; raises `ToolInputError` naming what does not fit"
    name = name or getattr(func, '__name__', type(func).__name__)
    args, kw = _plan(func, name).bind(_inputs(inputs), name)
    return {**dict(zip(_plan(func, name).posonly, args)), **kw} if args else kw

def call_func(
    fc_name,                  # the tool's name as the model sent it (dotted names reach methods), or the callable
    fc_inputs,                # its arguments: a dict, or the JSON text of one
    ns=None,                  # the namespace the tools were advertised from: a dict, a list of functions, ...
    raise_on_err:bool=True,   # raise errors, or return them as a message for the model
):                            # the tool's result, or the error message
    "Call the function `fc_name` with the given `fc_inputs` using namespace `ns`."
    check_caches()
    f = plan = None
    if type(ns) is dict and type(fc_name) is str and fc_name[:1] != '_':  # a plain function called before: no lookups
        f = ns.get(fc_name)
        hit = _plans.get(id(f))
        if hit is not None and hit[0]() is f: plan = hit[1]
    try:
        if plan is None: f, plan, args, kw = _prepare(fc_name, fc_inputs, ns)
        elif type(fc_inputs) is dict and _fits(plan, fc_inputs): args, kw = (), fc_inputs  # nothing to coerce
        else: args, kw = plan.bind(_inputs(fc_inputs), fc_name)
    except (ToolNotFound, ToolInputError, SchemaError) as e:
        if raise_on_err: raise
        return error_text(e)
    try:
        res = f(*args, **kw)
        if plan.is_async: res = _run_sync(res)
        return res
    except Exception as e:
        if raise_on_err: raise
        return _err_text(e)

async def call_func_async(
    fc_name,                  # the tool's name as the model sent it, or the callable
    fc_inputs,                # its arguments: a dict, or the JSON text of one
    ns=None,                  # the namespace the tools were advertised from
    raise_on_err:bool=True,   # raise errors, or return them as a message for the model
    in_thread:bool=True,      # run a sync tool in a worker thread, so it never blocks the event loop
):                            # the tool's result, or the error message
    "Awaits the function `fc_name` with the given `fc_inputs` using namespace `ns`."
    try: f, plan, args, kw = _prepare(fc_name, fc_inputs, ns)
    except (ToolNotFound, ToolInputError, SchemaError) as e:
        if raise_on_err: raise
        return error_text(e)
    try:
        if plan.is_async: res = await f(*args, **kw)
        elif in_thread: res = await to_thread(call_tool, f, args, kw)
        else: res = f(*args, **kw)
        if inspect.isawaitable(res): res = await res
        return res
    except Exception as e:
        if raise_on_err: raise
        return _err_text(e)
