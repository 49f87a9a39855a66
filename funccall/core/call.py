"""Run a model's tool call: find the tool in a namespace, coerce its JSON inputs, call it, report failures.

A model's tool call is untrusted input. Names resolve only to what could have been advertised (`_ns`),
inputs are checked and coerced against the annotations (`_coerce`), and every mistake in the call comes
back as `ToolNotFound` (a `LookupError`) or `ToolInputError` (a `ValueError`) naming what was wrong, or, with
`raise_on_err=False`, as a short message for the model. Nothing the model sends reaches outside the namespace.
A `Tool`, or a name of a `Toolbox` or `ToolGroup`, runs through that tool's pipeline (confirmation, injected values,
hooks, cache), never its bare function; `call_func` gives the tool's value whatever the namespace.
"""
from __future__ import annotations

import builtins, inspect, os, re, traceback, weakref
from types import CodeType, FunctionType, MethodType
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Literal, overload

from ._coerce import Mismatch, _identity, coercer, exact_type, path_text, ready
from ._inputs import MAX_SHOWN, Problem, ToolInputError, read_arguments as _inputs, short
from ._run import call_tool, to_thread, is_async as _is_async, run_sync as _run_sync
from ._package import is_own
from ._ns import Sealed, ToolHolder, ToolNotFound, find_tool, mk_ns, resolve_nm
from ._types import Default, SchemaError, empty, is_callable_object, on_types_changed, signature, type_has, var_anno
from ._typing import Arguments, JsonDict, Namespace, R, ToolFn

__all__ = ['call_func', 'call_func_async', 'coerce_inputs', 'call_args', 'NAMED', 'error_text', 'ToolInputError', 'ToolNotFound',
           'mk_ns', 'resolve_nm']

_P = inspect.Parameter
_VARS = (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)
NAMED = '__funccall_named__'
"A class attribute saying its callables take the arguments by the names the schema shows, as keywords (a `Tool`): never spread"
_ANY = object()  # in `_Plan.fast`: a parameter that takes any value as it is
_canon_re = re.compile(r'[\W_]+')
_SETTLED = frozenset({int, float, str, bool, type(None), list, dict, tuple})  # results that are never awaitable (`isawaitable` costs ~0.4 µs)

def _canon(k: str) -> str: return _canon_re.sub('', k)

class _Plan:
    "How to call one function: its parameters' coercers, defaults and kinds, worked out once"
    __slots__ = ('name', 'params', 'fast', 'all_given', 'n', 'required', 'canon', 'var_kw', 'posonly', 'is_async', 'takes', 'unset_by_null',
                 'fills', 'var_pos', 'var_key', 'before_var', 'keywords', 'spread', 'injected', '__weakref__')

    def __init__(self, f: ToolFn, name: str):
        self.name = name
        sig = signature(f)  # a `SchemaError` here is the developer's to fix; `raise_on_err=False` reports it
        ps, self.injected = sig.params, sig.injected
        # a tool built by `mk_tool` checks its arguments against its own schema, which may allow more than its annotations say;
        # any other tool takes only the names its schema shows: an unknown one is refused, never slipped into `**kwargs`
        built = type(f) is FunctionType and '__tool_schema__' in f.__dict__
        self.var_kw = built
        # the names a `**kwargs` key can't have: the keyword parameters', and the one a method binds (`self`, `cls`)
        self.keywords = frozenset(p.name for p in ps if p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)) | _bound_first(f)
        self.before_var = [p.name for p in ps if p.kind <= _P.POSITIONAL_OR_KEYWORD]
        # a typed `*args`/`**kwargs` is one argument the model fills, a list or an object (the schema's `args`, `kwargs`)
        ps = [p for p in ps if p.kind not in _VARS or (p.declared and not built)]
        self.posonly = [p.name for p in ps if p.kind is _P.POSITIONAL_ONLY]  # an injected one too: the pipeline places it
        # an injected parameter is the application's: never one the model's arguments fill (its name is refused as unknown)
        ps = [p for p in ps if p.name not in self.injected]
        self.var_pos = next((p.name for p in ps if p.kind is _P.VAR_POSITIONAL), None)
        self.var_key = next((p.name for p in ps if p.kind is _P.VAR_KEYWORD), None)
        # an unannotated parameter accepts anything: its default's type (`None`!) is no rule for what the model may send
        # name -> (coercer, default, kind, the type a value needs to skip coercion or None)
        annos = {p.name: var_anno(p) if p.kind in _VARS else p.anno for p in ps}
        self.params = {p.name: (ready(coercer(annos[p.name])), p.default, p.kind, exact_type(annos[p.name]))
                       if p.declared and not built else (_identity, p.default, p.kind, None) for p in ps}
        # null for a parameter with a default means "use the default" (strict mode makes optionals nullable, and a model
        # sends null for "not given"); a built tool gets the null itself and applies its schema's rule, so a call through
        # `call_func` or a `Toolbox` sends what a direct call sends
        self.unset_by_null = frozenset() if built else frozenset(p.name for p in ps if p.default is not empty or p.kind in _VARS)
        # a built tool's own check reports every problem, a missing argument with the rest: its parameters all default to unset
        self.required = frozenset() if built else frozenset(p.name for p in ps if p.default is empty and p.kind not in _VARS)
        self.fills = {p.name: p.default for p in ps if type(p.default) is Default}  # pydantic's `Field` defaults: the function's own won't do
        varied = self.var_pos is not None or self.var_key is not None
        # how the call is made: spread for a function's own parameters, by the schema's names for a `Tool` (it does the rest)
        self.spread = bool(self.posonly or self.fills or varied) and not type_has(type(f), NAMED)
        self.n = len(ps)
        self.is_async = _is_async(f)
        # the parameters a value may skip coercion for, when its type is exactly the annotation; None when a required one
        # has no such type (or positional-only parameters need placing): then every call goes to `bind`
        fast = {p.name: t for p in ps if (t := self._fast_type(p)) is not None}
        self.fast = None if self.spread or not self.required <= fast.keys() else fast
        by_position = _by_position(f, list(self.params))
        self.all_given = _all_given(self.params, by_position) if not varied and (by_position or not self.posonly) else None
        canon: dict = {}
        for nm in self.params: canon.setdefault(_canon(nm), []).append(nm)
        self.canon = {k: v[0] for k, v in canon.items() if len(v) == 1}
        names = list(self.params)
        self.takes = (f"the tool takes {', '.join(map(repr, names[:MAX_SHOWN]))}{', ...' if len(names) > MAX_SHOWN else ''}"
                      if names else 'the tool takes no arguments')

    def _fast_type(self, p: Any) -> Any:
        "The exact type a value of parameter `p` may have to skip coercion (`_ANY`: any value), or `None`"
        c, _, _, exact = self.params[p.name]
        return _ANY if c is _identity else exact

    def bind(self, inputs: dict, name: str | None=None, named: bool=False) -> Any:  # `(args, kw)`, or `kw` with `named`
        """Positional and keyword arguments for `inputs`, coerced (with `named`, the arguments by parameter name); raises
        `ToolInputError` naming the tool as `name` and every problem"""
        params, kw, failed = self.params, {}, None
        try:  # arguments named exactly as the parameters, that all fit: no bookkeeping
            for k, v in inputs.items():
                spec = params.get(k)
                if spec is None: break
                if type(v) is spec[3]: kw[k] = v
                elif v is None and k in self.unset_by_null: continue  # null means "use the default" (strict mode sends it)
                else: kw[k] = spec[0](v)
            else:
                if len(kw) == self.n or kw.keys() >= self.required:
                    return self._args(kw, name or self.name, named) if self.spread else kw if named else ((), kw)
        except Mismatch as e: failed = (k, e)  # pyright: ignore[reportPossiblyUnboundVariable]  # its problems, found already: not looked for again
        except RecursionError: pass
        return self._bind_carefully(inputs, kw, name or self.name, failed, named)

    def _bind_carefully(self, inputs: dict, kw: dict, tool: str, failed: tuple | None = None, named: bool = False) -> Any:
        """The rest of `inputs` after the arguments in `kw` (and `failed`, an argument with its `Mismatch`): names matched
        loosely, and every problem found and reported"""
        params, bad = self.params, None
        done = set(kw)  # coerced already
        seen = {k: k for k in done}
        for k, v in inputs.items():
            if k in done: continue
            if k in params: nm = k
            elif not isinstance(k, str): nm, why = None, 'argument names must be strings'
            else: nm, why = self.canon.get(_canon(k)), f'unknown argument; {self.takes}'
            if nm is None:
                if self.var_kw and isinstance(k, str): kw[k] = v; continue
                bad = _add(bad, [Problem(k if isinstance(k, str) else short(k, 40), why)])  # pyright: ignore[reportPossiblyUnboundVariable]
            elif nm in seen: bad = _add(bad, [Problem(k, f"names parameter {nm!r}, as {seen[nm]!r} does; send it once")])
            else:
                seen[nm] = k
                c, default = params[nm][:2]
                if v is None and nm in self.unset_by_null: continue  # null means "use the default" (strict mode sends it)
                try:
                    if failed is not None and k == failed[0]: raise failed[1]
                    kw[nm] = c(v); continue
                except Mismatch as e: bad = _add(bad, e.problems(k), e.full)
                except RecursionError: bad = _add(bad, [Problem(k, 'nested too deeply to read')])
            if bad[1]: break  # enough to show: the rest would not be read
        if bad is None and self.required <= kw.keys(): return self._args(kw, tool, named)
        if bad is None or not bad[1]:
            missing = [Problem(nm, 'missing (required)') for nm in params if nm in self.required and nm not in seen]
            if missing: bad = _add(bad, missing)
        raise ToolInputError.of(tool, bad[0], bad[1])  # type: ignore[index]  # a required one is missing: `bad` holds it

    def _args(self, kw: dict, tool: str, named: bool = False) -> Any:
        """The call's positional and keyword arguments for the coerced arguments `kw` (with `named`, `kw` itself): the
        defaults pydantic's `Field` holds filled in, `*args` and `**kwargs` spread"""
        if not self.spread: return kw if named else ((), kw)
        for nm, d in self.fills.items():
            if nm not in kw: kw[nm] = d.make(kw)
        extra = kw.get(self.var_key) if self.var_key is not None else None
        if extra and (clash := [k for k in extra if k in self.keywords]):  # it would give that parameter twice
            raise ToolInputError.of(tool, [Problem(path_text(self.var_key, (k,)),  # type: ignore[arg-type]  # `extra` is set: so is `var_key`
                                                   f"names parameter {k!r}; give it as an argument of its own")
                                           for k in clash[:MAX_SHOWN]], len(clash) > MAX_SHOWN)
        if named: return kw
        if self.var_key is not None: kw.pop(self.var_key, None)
        rest = kw.pop(self.var_pos, None) if self.var_pos is not None else None
        if rest:  # what comes before `*args` goes by position: each parameter, given or its default
            args = [kw.pop(nm) if nm in kw else self.params[nm][1] for nm in self.before_var] + list(rest)
        elif self.posonly:
            last = max((i for i, nm in enumerate(self.posonly) if nm in kw), default=-1)
            args = [kw.pop(nm) if nm in kw else self.params[nm][1] for nm in self.posonly[:last + 1]]
        else: args = []
        # placed last: a `kwargs` key naming a positional-only parameter is a key of `**kwargs`, as in Python, never that parameter
        if extra: kw.update(extra)
        return args, kw

def _bound_first(f: Any) -> frozenset[str]:
    "The name of the parameter method `f` binds (`self`, `cls`; of a callable object's `__call__`, a class's `__init__`), as a set"
    fn = f.__func__ if type(f) is MethodType else type(f).__call__ if is_callable_object(f) else f.__init__ if isinstance(f, type) else None  # type: ignore[misc]
    code = getattr(fn, '__code__', None)
    return frozenset(code.co_varnames[:1]) if code is not None and code.co_argcount else frozenset()

# A call that names every parameter is the common one: a function made for the plan's parameters takes it in a few
# steps (a loop over the arguments takes twice as long), and gives them by position where that binds the same (a call
# by keyword costs a dict and a lookup per argument). Its code is shared by every plan with parameters of the same
# sorts in the same order; their names, types and coercers are the function's defaults.
_ALL_GIVEN_MAX = 16  # more parameters than this: `bind`'s loop takes them
_all_given_code: dict = {}  # (the parameters' sorts, by position) -> code
_ALL_GIVEN_GLOBALS = {'__builtins__': builtins, 'Mismatch': Mismatch}

def _all_given(params: dict, by_position: bool) -> Callable[[dict], Any] | None:
    """A function taking a dict of arguments that names every parameter in `params` (`_Plan.params`) and nothing else:
    `(args, kw)` for the call, each value coerced unless it has exactly its type; a `Mismatch` (its `argument` set) for
    one that doesn't fit; None for any other dict, or a null (it may mean "use the default"): `bind`'s work"""
    if not 0 < len(params) <= _ALL_GIVEN_MAX: return None
    # each parameter's sort: `e` a type that needs no coercion (else coerced), `c` coerced, `a` any value as it is
    sorts = ''.join('a' if c is _identity else 'c' if t is None else 'e' for c, _, _, t in params.values())
    code = _all_given_code.get((sorts, by_position))
    if code is None: code = _all_given_code[(sorts, by_position)] = _all_given_source(sorts, by_position)
    defaults = [x for k, (c, _, _, t), s in zip(params, params.values(), sorts) for x in {'e': (k, t, c), 'c': (k, c), 'a': (k,)}[s]]
    return FunctionType(code, _ALL_GIVEN_GLOBALS, 'all_given', tuple(defaults))

def _all_given_source(sorts: str, by_position: bool) -> CodeType:
    "The code of `_all_given` for parameters of these sorts, in order"
    n, vs = len(sorts), ', '.join(f'v{i}' for i in range(len(sorts)))
    names = ', '.join({'e': f'k{i}=None, t{i}=None, c{i}=None', 'c': f'k{i}=None, c{i}=None', 'a': f'k{i}=None'}[s] for i, s in enumerate(sorts))
    call = f"({vs}{',' if n == 1 else ''}), {{}}" if by_position else f"(), {{{', '.join(f'k{i}: v{i}' for i in range(n))}}}"
    lines = [f'def all_given(d, {names}):', f'    if len(d) != {n}: return None',
             f"    try: {'; '.join(f'v{i} = d[k{i}]' for i in range(n))}", '    except KeyError: return None']  # a name it doesn't take
    if 'c' not in sorts:  # every value of exactly its type: nothing to coerce
        test = ' and '.join(f'type(v{i}) is t{i}' if s == 'e' else f'v{i} is not None' for i, s in enumerate(sorts))
        lines.append(f"    if {test}: return {call if by_position else '(), d'}")
    if sorts.strip('a'):
        lines += [f"    if {' or '.join(f'v{i} is None' for i in range(n))}: return None", '    try:',
                  *[f'        if type(v{i}) is not t{i}: k = k{i}; v{i} = c{i}(v{i})' if s == 'e' else f'        k = k{i}; v{i} = c{i}(v{i})'
                    for i, s in enumerate(sorts) if s != 'a'],
                  '    except Mismatch as e:', '        e.argument = k  # `_prepare` has `bind` report it with every other problem',
                  '        raise',
                  '    except RecursionError: return None', f'    return {call}']
    else: lines.append('    return None')
    made: dict = {}
    exec(compile('\n'.join(lines) + '\n', '<funccall call plan>', 'exec'), _ALL_GIVEN_GLOBALS, made)  # noqa: S102 - only numbered names in it
    return made['all_given'].__code__

def _by_position(f, names: list) -> bool:
    "Whether `f(*values)` binds exactly as `f(**dict(zip(names, values)))`: a plain function whose own code takes `names` first to last"
    if type(f) is not FunctionType: return False  # a wrapper, a method, a callable object: by keyword, as it says it takes them
    code = f.__code__
    return code.co_argcount == len(names) and code.co_varnames[:len(names)] == tuple(names)

def _add(bad: tuple | None, problems: list, cut: bool = False) -> tuple:
    "Problems found so far, and whether there are more than can be shown: `(problems, more)`"
    found = (bad[0] if bad else []) + problems
    return found, cut or len(found) > MAX_SHOWN

# --- plans, cached per function (weakly) --------------------------------------------------------------

_MAX_PLANS = 10_000  # functions made on the fly (lambdas, tools built per request) must not grow the cache forever
_plans: dict = {}  # id(function) -> (weak reference, plan); an entry leaves when its function dies, or the oldest when full
on_types_changed(_plans.clear)

def _plan_key(f: Any) -> Any:
    "What a plan is kept for: the function, a method's function, a callable object's class (`type`: no `__class__` of theirs runs)"
    tf = type(f)
    if tf is FunctionType: return f
    if tf is MethodType: return f.__func__
    return tf if is_callable_object(f) else f

def _plan(f: Any, name: str) -> _Plan:
    key = _plan_key(f)
    if issubclass(type(key), Sealed): return _Plan(f, name)  # never cached: `_prepare`'s fast path would call a `Tool` bare
    hit = _plans.get(id(key))
    if hit is not None and hit[0]() is key: return hit[1]  # one plan per function, whatever name it is called by
    plan = _Plan(f, name)
    # the callback holds the dict itself (module globals are gone at shutdown) and leaves an entry a newer function now owns
    try: ref = weakref.ref(key, lambda r, k=id(key), plans=_plans: plans.get(k, (None,))[0] is r and plans.pop(k, None))  # type: ignore[misc]
    except TypeError: return plan  # not weakly referenceable: not cached
    if len(_plans) >= _MAX_PLANS:
        try: del _plans[next(iter(_plans))]  # the oldest: a live function's plan is simply made again
        except (KeyError, StopIteration, RuntimeError): pass  # another thread got there first
    _plans[id(key)] = (ref, plan)
    return plan

# --- inputs and names -------------------------------------------------------------------------------

def _resolve(fc_name: Any, ns: Namespace) -> tuple[Any, str]:
    if type(fc_name) is str: return find_tool(fc_name, ns), fc_name  # (a `str` subclass could match any name: refused)
    if callable(fc_name): return fc_name, getattr(fc_name, '__name__', type(fc_name).__name__)
    raise ToolNotFound(repr(fc_name))

def _prepare(fc_name: Any, fc_inputs: Any, ns: Any) -> tuple[Any, _Plan | None, Any]:
    """The tool, its plan and its coerced arguments `(args, kw)`; a plain function called before by name from a dict needs no
    lookups. What runs its own pipeline (a `Tool`, or the `ToolHolder` holding the tool) comes with no plan: `(f, None, name)`"""
    if type(ns) is dict and type(fc_name) is str and not '_' <= fc_name < '`':  # not private: sorts below '_' or from '`'
        f = ns.get(fc_name)
        hit = _plans.get(id(f))
        if hit is not None and hit[0]() is f and not (plan := hit[1]).injected:
            if type(fc_inputs) is not dict:  # JSON text: read, then the same ways as a dict
                fc_inputs = _inputs(fc_inputs, fc_name)
                if type(fc_inputs) is not dict: return f, plan, plan.bind(fc_inputs, fc_name)
            if (given := plan.all_given) is not None:
                try: args = given(fc_inputs)
                except Mismatch as e: return f, plan, plan._bind_carefully(fc_inputs, {}, fc_name, (e.argument, e))  # type: ignore[attr-defined]  # set by `all_given`
                if args is not None: return f, plan, args
            fast = plan.fast  # every argument already has exactly its annotated type, and none is missing: nothing to coerce
            if fast is None: return f, plan, plan.bind(fc_inputs, fc_name)
            for k, v in fc_inputs.items():
                t = fast.get(k)  # null means "use the default", so it needs `bind`
                if t is not type(v) and (t is not _ANY or v is None): return f, plan, plan.bind(fc_inputs, fc_name)
            if len(fc_inputs) == plan.n or fc_inputs.keys() >= plan.required: return f, plan, ((), fc_inputs)
            return f, plan, plan.bind(fc_inputs, fc_name)
    f, nm = _resolve(fc_name, ns)
    if issubclass(type(f), Sealed): return f, None, nm
    plan = _plan(f, nm)
    if plan.injected:  # the developer's mistake, raised before the model's arguments are read: they may not fill it
        raise TypeError(f"Tool {nm!r} takes {', '.join(map(repr, plan.injected))}, which the application supplies (an injected type), "
                        f"never the model: run it as a Tool, e.g. Toolbox([{getattr(f, '__name__', 'f')}]).call(name, args, "
                        f"injected={{{', '.join(f'{k!r}: ...' for k in plan.injected)}}})")
    return f, plan, plan.bind(_inputs(fc_inputs, nm), nm)

# --- tools that run their own pipeline --------------------------------------------------------------

def _piped(f: Any, nm: str, inputs: Any) -> Any:
    "The `ToolResult` of running tool `nm` through its pipeline: `f` the `ToolHolder` holding it, or the `Tool` itself"
    return f.call(nm, inputs) if issubclass(type(f), ToolHolder) else f.execute(inputs)

async def _apiped(f: Any, nm: str, inputs: Any, in_thread: bool) -> Any:
    "`_piped` for async code (a holder runs its tools as it always does)"
    return await f.acall(nm, inputs) if issubclass(type(f), ToolHolder) else await f.aexecute(inputs, in_thread=in_thread)

def _unconfirmed(r: Any) -> PermissionError:
    "Why a call that needed the user's approval did not run"
    if r.status == 'pending':
        return PermissionError(f"Tool {r.name!r} needs the user's confirmation and has no `confirm` callback to ask: run it with "
                               "`Toolbox.call`, whose pending result `Toolbox.resume` runs once the user approves")
    return PermissionError(r.error)  # declined

def _value(r: Any, raise_on_err: bool) -> Any:
    "A pipeline's `ToolResult` as `call_func` answers: the value; else what failed, raised or as the model's message"
    if r.ok and r.exception is None: return r.value  # (a `StopRun` the tool raised is raised, as a function's is)
    e = r.exception if r.exception is not None else _unconfirmed(r)
    if raise_on_err: raise e
    return r.error if r.error is not None else error_text(e)

# --- failures as text for the model -----------------------------------------------------------------


def _err_text(e: BaseException) -> str:
    "A model-facing report of an exception raised inside a tool: the cause first, then the tool's own frames"
    frames = traceback.extract_tb(e.__traceback__)
    ours = [i for i, fr in enumerate(frames) if is_own(fr.filename)]
    frames = frames[ours[-1] + 1:] if ours else frames  # type: ignore[assignment]  # a slice of a `StackSummary` is a list of its frames
    lines = [traceback.format_exception_only(type(e), e)[-1].strip()]  # the cause (for a SyntaxError, its last line)
    if frames:
        lines.append('Traceback (most recent call last):')
        for fr in frames:
            lines.append(f'  File "{os.path.basename(fr.filename)}", line {fr.lineno}, in {fr.name}')
            if fr.line: lines.append(f'    {fr.line}')
    return '\n'.join(lines)

def error_text(
    e: BaseException,    # a failure of a tool call
    frames: bool=True,   # follow the cause of a tool's own failure with the tool's frames (as `call_func` reports it)
) -> str:                # what the model reads
    "A failure as the model should read it: one line for a bad call (or a tool funccall can't describe), the cause and the tool's frames otherwise"
    if isinstance(e, ToolNotFound): return f"ToolNotFound: {e}"  # whatever found the name wrong (a call expression too)
    if isinstance(e, (ToolInputError, SchemaError)): return f"{type(e).__name__}: {e}"
    if not frames: return traceback.format_exception_only(type(e), e)[-1].strip()
    return _err_text(e)

# --- the public calls --------------------------------------------------------------------------------

def coerce_inputs(
    func: ToolFn,         # the tool
    inputs: Arguments,    # its arguments from the model: a dict or JSON text
    name: str | None=None, # the tool's name in error messages (default: the function's)
    fold: str | None=None, # the parameter whose fields `inputs` are, as `get_schema(func, fold=True)` shows them
) -> JsonDict:         # the arguments, coerced to `func`'s annotations
    "Check and coerce a model's arguments for `func`; raises `ToolInputError` naming what does not fit"
    tool: str = name or getattr(func, '__name__', type(func).__name__)  # type: ignore[assignment]  # mypy reads `str | None` in it
    plan, kw = _plan(func, tool), _inputs(inputs, tool)
    if fold is not None:  # the object is built from the whole of `inputs`; a problem is named at its place there
        try: kw = {fold: plan.params[fold][0](kw)}
        except Mismatch as e: raise ToolInputError.of(tool, e.problems(''), e.full) from None
    return plan.bind(kw, tool, named=True)

def call_args(
    func: ToolFn,  # the tool
    kw: JsonDict,  # its arguments by parameter name, coerced (as `coerce_inputs` gives them), injected ones included
) -> tuple[Sequence[Any], JsonDict]:  # `(args, kw)` to call `func(*args, **kw)` with
    "How to call `func` with arguments named as its parameters: positional-only ones by position, `*args` and `**kwargs` spread"
    plan = _plan(func, getattr(func, '__name__', type(func).__name__))
    return plan._args(dict(kw), plan.name) if plan.spread else ((), kw)

# What a checker knows of the result: a callable's own return (awaited, for an async one), or `| str` when a failure comes
# back as the model's message; a name could be any tool, so `Any`. (The stubs carry no comments: `docments` reads the
# implementation, last.)
# (a `Tool` first: called itself it gives text, run by `call_func` its function's value; then a coroutine function, which
# `call_func` runs to its end: not any function returning an awaitable, which it gives back as it is)
@overload
def call_func(fc_name: Sealed, fc_inputs: Arguments, ns: Namespace = None, raise_on_err: bool = True) -> Any: ...
@overload
def call_func(fc_name: Callable[..., Coroutine[Any, Any, R]], fc_inputs: Arguments, ns: Namespace = None,
              raise_on_err: Literal[True] = True) -> R: ...
@overload
def call_func(fc_name: Callable[..., Coroutine[Any, Any, R]], fc_inputs: Arguments, ns: Namespace = None,
              raise_on_err: bool = True) -> R | str: ...
@overload
def call_func(fc_name: Callable[..., R], fc_inputs: Arguments, ns: Namespace = None, raise_on_err: Literal[True] = True) -> R: ...
@overload
def call_func(fc_name: Callable[..., R], fc_inputs: Arguments, ns: Namespace = None, raise_on_err: bool = True) -> R | str: ...
@overload
def call_func(fc_name: str, fc_inputs: Arguments, ns: Namespace = None, raise_on_err: bool = True) -> Any: ...
def call_func(
    fc_name: str | ToolFn | Sealed,  # the tool's name as the model sent it (dotted names reach methods), or the callable
    fc_inputs: Arguments,     # its arguments: a dict, or the JSON text of one
    ns: Namespace=None,       # the namespace the tools were advertised from: a dict, a list of functions, ...
    raise_on_err:bool=True,   # raise errors, or return them as a message for the model
) -> Any:                     # the tool's result, or the error message
    """Call the function `fc_name` with the given `fc_inputs` using namespace `ns`. A `Tool` (or a tool of a `Toolbox` or
    `ToolGroup`) runs through its pipeline and gives its value; a call awaiting or refused the user's approval is a
    `PermissionError`; a missing injected value is the developer's mistake, raised (give a `Toolbox` its `injected=`)"""
    try: f, plan, bound = _prepare(fc_name, fc_inputs, ns)
    except (ToolNotFound, ToolInputError, SchemaError) as e:
        if raise_on_err: raise
        return error_text(e)
    if plan is None: return _value(_piped(f, bound, fc_inputs), raise_on_err)
    args, kw = bound
    try:
        res = f(*args, **kw)
        if plan.is_async: res = _run_sync(res)
        return res
    except Exception as e:
        if raise_on_err: raise
        return error_text(e)

@overload
async def call_func_async(fc_name: Sealed, fc_inputs: Arguments, ns: Namespace = None,
                          raise_on_err: bool = True, in_thread: bool = True) -> Any: ...
@overload
async def call_func_async(fc_name: Callable[..., Awaitable[R]], fc_inputs: Arguments, ns: Namespace = None,
                          raise_on_err: Literal[True] = True, in_thread: bool = True) -> R: ...
@overload
async def call_func_async(fc_name: Callable[..., Awaitable[R]], fc_inputs: Arguments, ns: Namespace = None,
                          raise_on_err: bool = True, in_thread: bool = True) -> R | str: ...
@overload
async def call_func_async(fc_name: Callable[..., R], fc_inputs: Arguments, ns: Namespace = None,
                          raise_on_err: Literal[True] = True, in_thread: bool = True) -> R: ...
@overload
async def call_func_async(fc_name: Callable[..., R], fc_inputs: Arguments, ns: Namespace = None,
                          raise_on_err: bool = True, in_thread: bool = True) -> R | str: ...
@overload
async def call_func_async(fc_name: str, fc_inputs: Arguments, ns: Namespace = None,
                          raise_on_err: bool = True, in_thread: bool = True) -> Any: ...
async def call_func_async(
    fc_name: str | ToolFn | Sealed,  # the tool's name as the model sent it, or the callable
    fc_inputs: Arguments,     # its arguments: a dict, or the JSON text of one
    ns: Namespace=None,       # the namespace the tools were advertised from
    raise_on_err:bool=True,   # raise errors, or return them as a message for the model
    in_thread:bool=True,      # run a sync tool in a worker thread, so it never blocks the event loop (a toolbox's: as it runs them)
) -> Any:                     # the tool's result, or the error message
    "Awaits the function `fc_name` with the given `fc_inputs` using namespace `ns`, as `call_func` calls it"
    try: f, plan, bound = _prepare(fc_name, fc_inputs, ns)
    except (ToolNotFound, ToolInputError, SchemaError) as e:
        if raise_on_err: raise
        return error_text(e)
    if plan is None: return _value(await _apiped(f, bound, fc_inputs, in_thread), raise_on_err)
    args, kw = bound
    try:
        if plan.is_async: res = await f(*args, **kw)
        elif in_thread: res = await to_thread(call_tool, f, args, kw)
        else: res = f(*args, **kw)
        if type(res) not in _SETTLED and inspect.isawaitable(res): res = await res
        return res
    except Exception as e:
        if raise_on_err: raise
        return error_text(e)
