"""From JSON tool schemas back to Python: annotations, signatures and callables (e.g. an MCP server's tools).

`schema2anno` is the inverse of `handle_type`: `enum` and `const` become `Literal`, `anyOf`/`oneOf` and type
arrays become unions (`null` makes them `Optional`), `prefixItems` a fixed tuple, `uniqueItems` a set, an
object with properties a generated `TypedDict`, `additionalProperties` a `dict[str, T]`, string formats
`datetime`/`date`/`time`/`UUID`/`Path`/`Decimal`/`bytes`. Descriptions and keywords with no Python type
(`minimum`, `pattern`, an unknown `format`) ride along as `Annotated` metadata (`JsonSchema`), so `get_schema` gives the
schema back. Objects become `TypedDict`s rather than dataclasses because the values go back out as JSON: a
`TypedDict` is a plain dict at run time, so what the caller passes is what the tool receives.

`mk_tool(dispfn, tool)` builds a function with that signature which checks its arguments with the call
module's engine and calls `dispfn(tool_name, /, **arguments)` with the schema's own property names.
"""
from __future__ import annotations

import datetime as dt, inspect, keyword, re, typing
from decimal import Decimal
from inspect import Parameter, Signature
from pathlib import Path
from typing import Any, Literal, Optional, Union
from uuid import UUID

from ._json import jsonable
from ._types import JsonSchema
from .call import _ANY, ToolInputError, _Plan

__all__ = ['mk_param', 'schema2sig', 'mk_tool', 'schema2anno', 'tool_parts']

empty = Parameter.empty

# --- accepting every tool form ------------------------------------------------------------------------

def _get(o, *names):
    for nm in names:
        if isinstance(o, dict):
            if nm in o: return o[nm]
        elif (v := getattr(o, nm, None)) is not None: return v
    return None

def tool_parts(
    tool,  # an MCP `Tool` (1.x `inputSchema` or 2.x `input_schema`), or a dict in any format funccall emits
) -> tuple[str, str, dict]:  # name, description, parameters schema
    "The name, description and input schema of `tool`, whatever its format"
    if isinstance(tool, dict) and tool.get('type') == 'function' and isinstance(tool.get('function'), dict): tool = tool['function']
    s = _get(tool, 'inputSchema', 'input_schema', 'parameters')
    if s is not None and not isinstance(s, dict): s = s.model_dump() if hasattr(s, 'model_dump') else dict(s)
    return _get(tool, 'name') or '', _get(tool, 'description') or '', s or {'type': 'object', 'properties': {}}

# --- names ----------------------------------------------------------------------------------------------

def _py_nm(nm: str) -> str:
    "A Python identifier for property name `nm`"
    if nm.isidentifier() and not keyword.iskeyword(nm): return nm
    nm = re.sub(r'\W', '_', nm)
    if not nm: return '_'
    if nm[0].isdigit(): nm = f'_{nm}'
    if keyword.iskeyword(nm): nm = f'{nm}_'
    return nm

def _nm_map(nms) -> dict:
    "Python name -> original property name; raises on two names that sanitize alike"
    py2orig = {}
    for orig in nms:
        pynm = _py_nm(orig)
        prev = py2orig.get(pynm)
        if prev is not None and prev != orig:
            raise ValueError(f'Name collision after sanitizing: {prev!r} and {orig!r} -> {pynm!r}')
        py2orig[pynm] = orig
    return py2orig

# --- annotations --------------------------------------------------------------------------------------

class _Described(typing._AnnotatedAlias, _root=True):
    "`Annotated[T, ...]` that prints as `T`, so a rebuilt signature reads like the schema's types"
    def __repr__(self): return inspect.formatannotation(self.__origin__)
    def __reduce__(self): return typing.Annotated.__class_getitem__, ((self.__origin__, *self.__metadata__),)

_described: dict = {}  # (type, descriptions) -> alias: making a typing alias costs microseconds, looking one up doesn't

def _annotated(t, meta: list):
    if not meta: return t
    meta = tuple(meta)
    if type(t) is not type or not all(type(m) is str for m in meta): return _Described(t, meta)
    try: return _described[t, meta]
    except KeyError:
        if len(_described) > 10_000: _described.clear()
        res = _described[t, meta] = _Described(t, meta)
        return res

_formats = {'date-time': dt.datetime, 'date': dt.date, 'time': dt.time, 'uuid': UUID, 'Path': Path, 'decimal': Decimal}
_scalars = {'string': str, 'integer': int, 'number': float, 'boolean': bool, 'null': type(None)}
# keywords that the annotation itself carries; anything else is kept as metadata
_typed = {'type', 'description', 'enum', 'const', 'anyOf', 'oneOf', 'items', 'prefixItems', 'uniqueItems', 'minItems', 'maxItems',
          'properties', 'required', 'additionalProperties', 'title', '$ref', 'default', 'propertyNames', '$defs', 'definitions',
          '$schema', 'contentEncoding', 'nullable', 'allOf'}
# (`format` is carried when it makes a type, `datetime` for `date-time`; otherwise it stays metadata)

class _Anno:
    "One conversion: the root `$defs` and the classes made from them, so a `$ref` is built once and recursion ends"
    def __init__(self, defs: dict | None):
        self.defs, self.made = defs or {}, {}

    def anno(self, s, described: bool = True):
        "Annotation for schema `s`, with its description and untyped keywords as metadata"
        if s is True or not s: return Any
        if (one := s.get('allOf')) and len(one) == 1: s = {**{k: v for k, v in s.items() if k != 'allOf'}, **one[0]}
        t = self._type(s)
        if s.get('nullable') is True and t is not Any: t = Optional[t]  # OpenAPI's (and Gemini's) way to say null
        meta = []
        if described and type(d := s.get('description')) is str: meta.append(d)
        lengths = s.get('type') == 'array' and 'prefixItems' not in s and s.get('maxItems') != 0  # a list keeps its length limits
        if s.keys() - _typed or (lengths and ('minItems' in s or 'maxItems' in s)):  # keywords the annotation can't carry
            extra = {k: v for k, v in s.items() if (k not in _typed or lengths and k in ('minItems', 'maxItems'))
                     and not (k == 'format' and t is not str)}
            if extra: meta.append(JsonSchema(extra))
        return _annotated(t, meta)

    def _type(self, s: dict):
        if '$ref' in s: return self._ref(s['$ref'])
        if 'const' in s: return Literal[s['const']]
        if 'enum' in s: return Literal[tuple(s['enum'])]
        for k in ('anyOf', 'oneOf'):
            if k in s: return _union([self.anno(x) for x in s[k]])
        ty = s.get('type')
        if isinstance(ty, list): return _union([self._type({**s, 'type': x}) for x in ty])
        if ty == 'string':
            if s.get('contentEncoding') == 'base64': return bytes
            return _formats.get(s.get('format'), str)
        if ty in _scalars: return _scalars[ty]
        if ty == 'array': return self._array(s)
        if ty == 'object' or 'properties' in s: return self._object(s, s.get('title'))
        return Any

    def _array(self, s: dict):
        if 'prefixItems' in s: return tuple[tuple(self.anno(x) for x in s['prefixItems'])]
        if isinstance(s.get('items'), list): return tuple[tuple(self.anno(x) for x in s['items'])]  # draft-07's tuples
        if s.get('maxItems') == 0: return tuple[()]
        item = self.anno(s['items']) if isinstance(s.get('items'), dict) and s['items'] else Any
        if s.get('uniqueItems'): return set[item]
        return list[item]

    def _object(self, s: dict, title: str | None, name: str | None = None):
        if 'properties' in s and (s['properties'] or title): return self._typeddict(name or title or 'Object', s)
        add = s.get('additionalProperties')
        if isinstance(add, dict):
            names = s.get('propertyNames') or {}
            key = int if names.get('pattern') == r'^-?[0-9]+$' else Literal[tuple(names['enum'])] if 'enum' in names else str
            return dict[key, self.anno(add)]
        return dict

    def _ref(self, ref: str):
        nm = ref.rsplit('/', 1)[-1]
        if nm in self.made: return self.made[nm]
        s = self.defs.get(nm)
        if s is None: raise ValueError(f"Schema refers to {ref!r}, which is not in its $defs")
        if 'properties' not in s:
            self.made[nm] = Any  # recursion through a def that is not an object: end it
            res = self.made[nm] = self.anno(s)
            return res
        return self._typeddict(nm, s)

    def _typeddict(self, nm: str, s: dict):
        "A TypedDict for an object schema; made empty first and filled after, so it can refer to itself"
        title = s.get('title') or nm
        td = typing.TypedDict(title, {})
        if nm != title and nm.endswith('.' + title): td.__module__ = nm[:-len(title) - 1]  # `module.Name`: a second class named alike
        if nm in self.defs: self.made[nm] = td
        req, annos = set(s.get('required', ())), {}
        for k, ps in s['properties'].items():
            a = self.anno(ps)
            if 'default' in ps: a = _annotated(a, [JsonSchema(default=ps['default'])])
            annos[k] = a
        td.__annotations__ = annos
        td.__required_keys__, td.__optional_keys__ = frozenset(req & set(annos)), frozenset(set(annos) - req)
        td.__total__ = not td.__optional_keys__
        return td

def _union(members: list):
    "A union of `members` in their order (`anyOf` order is meaning: the first that fits wins)"
    if Any in members: return Any
    return members[0] if len(members) == 1 else Union[tuple(members)]

def schema2anno(
    s: dict,          # a JSON Schema fragment
    defs: dict=None,  # the root `$defs`, used to resolve `$ref`
):                    # an annotation that `handle_type` maps back to `s`
    "Annotation for schema `s`; the inverse of `handle_type`"
    return _Anno(defs).anno(s)

# --- parameters and signatures ------------------------------------------------------------------------

def mk_param(
    orig: str,        # the property's name in the schema
    props: dict,      # the property's schema
    req,              # the names of the required properties
    pynm: str=None,   # the Python name to give it (default: `orig`)
    defs: dict=None,  # the root `$defs`, used to resolve `$ref`
) -> Parameter:
    "Create a `Parameter` for `orig` with schema `props`"
    return _mk_param(orig, props, req, pynm, _Anno(defs))

def _mk_param(orig, props, req, pynm, conv: _Anno) -> Parameter:
    required = orig in req
    kind = Parameter.POSITIONAL_OR_KEYWORD if required else Parameter.KEYWORD_ONLY
    default = empty if required else props.get('default')
    return Parameter(pynm or orig, kind, default=default, annotation=conv.anno(props))

def _sig(tool) -> tuple[Signature, dict, str, str]:
    nm, desc, s = tool_parts(tool)
    props, req = s.get('properties') or {}, set(s.get('required') or ())
    py2orig, conv = _nm_map(props), _Anno(s.get('$defs') or s.get('definitions'))
    ps = [_mk_param(orig, props[orig], req, pynm, conv) for pynm, orig in py2orig.items()]
    # names are unique and sanitized, and sorting puts the kinds in order: nothing left for `Signature` to validate
    return Signature(sorted(ps, key=lambda p: p.kind), __validate_parameters__=False), py2orig, nm, desc

def schema2sig(
    tool,  # a tool in any format `tool_parts` takes
) -> Signature:
    "Convert json schema `tool` to a `Signature`"
    return _sig(tool)[0]

# --- callables ----------------------------------------------------------------------------------------

_UNSET = object()  # what a generated function gets for an argument its caller left out
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})

def _source(sig: Signature, py2orig: dict, fast: dict, check: bool, pre: str) -> str:
    """Source of a function with `sig`'s parameters that collects the arguments given under their schema names and
    sends them on at once when each has exactly its JSON type; anything else goes the checked way (`slow`).
    Its own names start with `pre`, which no parameter name does."""
    args, body, star = [], [], False
    for p in sig.parameters.values():
        if p.kind is Parameter.KEYWORD_ONLY and not star: args.append('*'); star = True
        args.append(f'{p.name}={pre}UNSET')
        t, key = fast.get(p.name), py2orig[p.name]
        if not check: test = ''
        elif t is _ANY: test = f'\n        if type({p.name}) not in {pre}JSON: {pre}ok = False'  # any value, but sent as JSON
        elif t: test = f'\n        if type({p.name}) is not {pre}T_{p.name}: {pre}ok = False'
        else: test = f'\n        {pre}ok = False'
        put = f'{pre}kw[{key!r}] = {p.name}{test}'
        if p.default is empty: body.append(f'    if {p.name} is {pre}UNSET: {pre}ok = False\n    else:\n        {put}')
        else: body.append(f'    if {p.name} is not {pre}UNSET:\n        {put}')
    args.append(f'**{pre}extra')
    return (f"def fn({', '.join(args)}):\n    {pre}kw, {pre}ok = {{}}, not {pre}extra\n" + '\n'.join(body) +
            f'\n    if {pre}ok: return {pre}disp({pre}name, **{pre}kw)\n    return {pre}slow({pre}kw, {pre}extra)\n')

def mk_tool(
    dispfn,               # called as `dispfn(tool_name, /, **arguments)`; may be async
    tool,                 # a tool in any format `tool_parts` takes
    check: bool=True,     # check the arguments before dispatching: names, types, enum values, ranges, lengths, patterns
):                        # a function with the tool's signature, name and description
    "Create a callable function from a JSON schema tool definition"
    sig, py2orig, name, desc = _sig(tool)
    orig2py = {v: k for k, v in py2orig.items()}
    is_async = inspect.iscoroutinefunction(dispfn)

    def slow(kw: dict, extra: dict):
        "The checked way: unexpected or missing arguments, or values to coerce; then the JSON values are sent"
        if extra:
            raise ToolInputError(f"Tool {name!r} got unexpected argument(s) {', '.join(map(repr, extra))}; "
                                 f"its arguments are: {', '.join(map(repr, sig.parameters)) or 'none'}")
        pykw = {orig2py[k]: v for k, v in kw.items()}
        if missing := [p.name for p in sig.parameters.values() if p.default is empty and p.name not in pykw]:
            raise ToolInputError(f"Tool {name!r} is missing required argument(s): {', '.join(map(repr, missing))}")
        if check: kw = {py2orig[k]: jsonable(v) for k, v in plan.bind(pykw)[1].items()}
        return dispfn(name, **kw)

    def placeholder(**kw): pass  # the plan needs a function with the tool's signature before the real one exists
    placeholder.__signature__ = sig
    placeholder.__annotations__ = {k: p.annotation for k, p in sig.parameters.items()}
    plan = _Plan(placeholder, name)  # this tool's own: nothing to share it with
    pre = '_fc_'
    while any(k.startswith(pre) for k in sig.parameters): pre = '_' + pre
    ns = {f'{pre}UNSET': _UNSET, f'{pre}disp': dispfn, f'{pre}name': name, f'{pre}slow': slow, f'{pre}JSON': _JSON_SCALARS,
          **{f'{pre}T_{k}': t for k, t in plan.fast.items()}}
    exec(_source(sig, py2orig, plan.fast, check, pre), ns)  # noqa: S102 - only sanitized identifiers and reprs go in
    fn = ns['fn']
    if is_async:  # an async dispatcher makes an async tool
        sync_fn = fn
        async def fn(*args, **kwargs): return await sync_fn(*args, **kwargs)
    fn.__signature__, fn.__doc__, fn.__name__, fn.__qualname__ = sig, desc, name, name
    fn.__annotations__ = placeholder.__annotations__
    return fn
