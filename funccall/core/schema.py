"""JSON tool schemas from Python functions, methods, classes and callable objects.

The output is the reference dialect (toolslm's `get_schema`): `input_schema`, `description: ''` for an
undocumented parameter, `default` inside the property, `anyOf` for unions, `prefixItems` for fixed tuples,
nested classes in one root `$defs`, the return annotation appended to the description.
"""
from __future__ import annotations

import datetime as dt, functools, importlib.util, inspect, marshal, warnings, weakref
from decimal import Decimal
from uuid import UUID
from types import FunctionType, MethodType
from collections.abc import Iterable
from typing import Any, overload

from ._warnings import SchemaWarning, caller_level, warn_undocumented
from ._docs import Docs, class_docs, doc_text, func_docs, joined
from ._json import MAX_NESTING, jsonable, nesting, too_deep
from ._ns import mk_ns, resolve_nm
from ._types import (
    Default, JsonSchema, NoneType, SchemaError, TypeInfo, constraints, custom_types, empty, field_info, fields, is_callable_object, kind,
    needs_pydantic, on_types_changed, own_annotations, has_self, resolve_self, self_class, signature, type_name, var_anno
)
from ._typing import JsonDict, Namespace, ToolFn

__all__ = ['get_schema', 'get_schema_nm', 'handle_type', 'union_schema', 'custom_types', 'SchemaError', 'SchemaWarning', 'tool_docs']

_json_types = {bool: 'boolean', int: 'integer', float: 'number', str: 'string', NoneType: 'null'}
_formats = {UUID: {'format': 'uuid'}, dt.datetime: {'format': 'date-time'}, dt.date: {'format': 'date'}, dt.time: {'format': 'time'},
            Decimal: {'format': 'decimal'}, bytes: {'contentEncoding': 'base64'}}


def _enum_schema(values: list) -> dict:
    "`enum` with a `type` when all values share one"
    tys = {_json_types.get(type(v)) for v in values}
    return {'type': ty, 'enum': values} if len(tys) == 1 and (ty := tys.pop()) else {'enum': values}

def _unique(ss: list) -> list:
    res = []
    for s in ss:
        if s not in res: res.append(s)
    return res

_containers = frozenset((list, dict, tuple, set, frozenset))

def _where(w: tuple) -> str: return f"{w[0]} {w[1]!r} of {w[2]!r}"

class _Walker:
    "One walk over the annotations of one tool: every class met goes to the shared root `defs`"
    __slots__ = ('defs', 'owners', 'evalable')

    def __init__(self, defs: dict | None, evalable: bool = False):
        self.defs: dict = {} if defs is None else defs
        self.owners: dict[str, type] = {}
        self.evalable = evalable

    def schema(self, t: Any) -> dict:
        "JSON Schema of annotation `t`"
        info = kind(t)
        s = _handlers[info.kind](self, info)
        return self._meta(s, info.meta) if info.meta else s

    def _meta(self, s: dict, meta: tuple) -> dict:
        "Apply `Annotated` metadata: a string or pydantic `Field` describes, constraints constrain, a dict adds keywords"
        # `JsonSchema` metadata is raw JSON Schema, as written by hand or kept by `schema2anno`
        if needs_pydantic(meta) and not _has_pydantic():
            raise SchemaError(f"{_shown(meta)} is a check only pydantic runs, and pydantic is not installed; install it (pip install pydantic)")
        s = dict(s)
        for m in meta:
            if isinstance(m, str):
                s.setdefault('description', m); continue
            if isinstance(m, JsonSchema):
                s.update(m); continue
            if isinstance(getattr(m, 'description', None), str): s.setdefault('description', m.description)
            s.update(constraints((m,), s.get('type')))
            if field_info(m): s.update(_field_keywords(m))
        return s

    def default(self, v: Any, where: tuple) -> Any:
        "A default as the schema shows it: as is, or JSON-safe with `evalable`; `empty` when JSON can't hold it"
        if type(v) is Default: v = v.shown()
        if type(v) in _containers and nesting(v, MAX_NESTING) > MAX_NESTING:  # (one that holds itself: no schema can show it)
            warnings.warn(f"{_where(where)}: default left out of the schema: it holds itself, or is nested over {MAX_NESTING} levels deep",
                          SchemaWarning, stacklevel=caller_level())
            return empty
        if v is empty or not self.evalable: return v
        try: return jsonable(v)
        except TypeError as e:
            warnings.warn(f"{_where(where)}: default left out of the schema: {e}", SchemaWarning, stacklevel=caller_level())
            return empty

    def prop(self, anno: Any, default: Any, where: tuple, comment: str | None = None, declared: str | None = None,
             doc: str | None = None) -> dict:
        "Schema of one parameter or field: description, default, then its type; `where` names it in errors"
        try: ts = self.schema(anno)
        except SchemaError as e: raise SchemaError(f"{_where(where)}: {e}") from None
        # the precedence documented in `_docs`: comment, then Annotated/Field, then the docstring's entry, kept too when it says more
        p: dict[str, Any] = {'description': joined(comment or declared or ts.get('description'), doc)}
        if default is not empty and (d := self.default(default, where)) is not empty: p['default'] = d
        if 'description' in ts: ts = {k: v for k, v in ts.items() if k != 'description'}
        p.update(ts)
        return p

    def obj(self, info: TypeInfo, skip_hidden: bool = False) -> dict:
        "Object schema of a class kind, with a `title`"
        t = info.t
        init = _own_init(t) if info.kind == 'class' else None
        docs = class_docs(t, init)
        props, req = {}, []
        for f in fields(info):
            if skip_hidden and f.name.startswith('_'): continue
            props[f.name] = self.prop(f.anno, f.default, ('Field', f.name, t.__qualname__),
                                      docs.comments.get(f.attr), f.doc, docs.doc_params.get(f.attr))
            if f.required: req.append(f.name)
        s = {'type': 'object', 'properties': props, 'title': t.__name__}
        if req: s['required'] = req
        return s

    def ref(self, info: TypeInfo) -> dict:
        "A `$ref` to class `info.t` in the root `$defs`, its slot reserved before recursing so self-reference ends"
        t = info.t
        qual = f"{t.__module__}.{t.__qualname__}".replace('<locals>.', '')
        for nm in (t.__name__, qual, *(f'{qual}_{i}' for i in range(2, 100))):
            owner = self.owners.get(nm)
            if owner is t: break
            if owner is None and nm in self.defs and self._same(info, nm): self.owners[nm] = t; break  # from an earlier call
            if owner is None and nm not in self.defs:
                self.owners[nm], self.defs[nm] = t, {}
                self.defs[nm] = self.obj(info)
                break
        return {'$ref': f'#/$defs/{nm}'}  # pyright: ignore[reportPossiblyUnboundVariable]  # the loop runs: its tuple is never empty

    def _same(self, info: TypeInfo, nm: str) -> bool:
        "Whether `defs[nm]`, put there by an earlier `handle_type` call sharing `defs`, describes class `info.t`"
        scratch = _Walker(dict(self.defs), self.evalable)
        scratch.owners = dict.fromkeys(self.defs, info.t)  # no recursion into the comparison
        return scratch.obj(info) == self.defs[nm]

def _own_init(t: type) -> FunctionType | None:
    "The `__init__` of class `t` that has comments to read: a Python function, not `object`'s own"
    return t.__init__ if isinstance(t.__init__, FunctionType) else None  # type: ignore[misc]  # read off the class itself

def _has_pydantic() -> bool: return importlib.util.find_spec('pydantic') is not None

def _shown(meta: tuple) -> str: return ', '.join(repr(m)[:80] for m in meta if needs_pydantic((m,)))

def _field_keywords(fi: Any) -> dict:
    "What pydantic's `Field` adds to a schema beyond constraints and description: `title`, `examples`, `json_schema_extra`"
    res = {k: v for k in ('title', 'examples') if (v := getattr(fi, k, None)) is not None}
    if getattr(fi, 'deprecated', None): res['deprecated'] = True
    if isinstance(extra := getattr(fi, 'json_schema_extra', None), dict): res.update(extra)
    return res

# --- the {kind: handler} table -------------------------------------------------------------------------

def _any_schema(w, info): return {}
def _none_schema(w, info): return {'type': 'null'}
def _scalar_schema(w, info): return {'type': _json_types[info.args[0]]}
def _object_schema(w, info): return {'type': 'object'}
def _literal_schema(w, info): return _enum_schema([jsonable(v) for v in info.args])

def _enum_member_schema(w, info): return _enum_schema([jsonable(m) for m in info.t])

def _union_schema(w, info): return {'anyOf': [w.schema(a) for a in info.args]}

def _list_schema(w, info): return {'type': 'array', 'items': w.schema(info.args[0])}
def _set_schema(w, info): return {'type': 'array', 'items': w.schema(info.args[0]), 'uniqueItems': True}

def _tuple_schema(w, info):
    args = info.args
    if len(args) == 2 and args[1] is Ellipsis: return {'type': 'array', 'items': w.schema(args[0])}
    if not args: return {'type': 'array', 'items': {}, 'maxItems': 0}  # `tuple[()]`
    prefix = [w.schema(a) for a in args]
    # a description belongs to its position: `items` holds the types only, so `handle_type(schema2anno(s))` gives `s` back
    uniq = _unique([{k: v for k, v in p.items() if k != 'description'} for p in prefix])
    items = {} if not uniq else uniq[0] if len(uniq) == 1 else {'anyOf': uniq}
    return {'type': 'array', 'prefixItems': prefix, 'items': items, 'minItems': len(args), 'maxItems': len(args)}

def _dict_schema(w, info):
    if not info.args: return {'type': 'object'}
    k, v = info.args
    s = {'type': 'object', 'additionalProperties': w.schema(v)}
    ki = kind(k)
    kk = ki.kind
    if kk == 'scalar' and ki.args[0] is int: s['propertyNames'] = {'pattern': r'^-?[0-9]+$'}
    elif kk in ('literal', 'enum'): s['propertyNames'] = {'enum': [str(x) for x in w.schema(k)['enum']]}
    return s

def _format_schema(w, info):
    return {'type': 'string', **_formats.get(info.args[0], {'format': info.t.__name__})}  # else the reference's `format: Path`

def _class_schema(w, info): return w.ref(info)

_handlers = {
    'any': _any_schema, 'none': _none_schema, 'scalar': _scalar_schema, 'object': _object_schema,
    'literal': _literal_schema, 'enum': _enum_member_schema, 'union': _union_schema, 'list': _list_schema,
    'set': _set_schema, 'tuple': _tuple_schema, 'dict': _dict_schema, 'format': _format_schema,
    'typeddict': _class_schema, 'namedtuple': _class_schema, 'dataclass': _class_schema, 'model': _class_schema,
    'class': _class_schema,
}

def handle_type(
    t: Any,                       # a type annotation
    defs: JsonDict | None=None,   # the root `$defs`, where classes met on the way are put
) -> JsonDict:                    # its JSON Schema
    "JSON Schema for annotation `t`; nested classes are added to `defs` and referenced"
    return _Walker(defs).schema(t)

def union_schema(
    t: Any,                       # a `Union[...]` or `X | Y` annotation
    defs: JsonDict | None=None,   # the root `$defs`
) -> JsonDict:                    # `anyOf` of its members' schemas
    "JSON Schema for union `t`"
    return _Walker(defs).schema(t)

def _process_property(name, info, props, req, defs, evalable=False):
    "Add parameter `name`, described by a docments entry `info` (`.anno`, `.default`, `.docment`), to `props`/`req`"
    props[name] = _Walker(defs, evalable).prop(info.anno, info.default, ('Parameter', name, '?'), info.docment)
    if info.default is empty: req[name] = True

# --- return descriptions -------------------------------------------------------------------------------

def _schema_str(s: dict) -> str:
    "Short type name for a schema, as the description's `Returns:` line shows it"
    if '$ref' in s: return s['$ref'].rsplit('/', 1)[-1]
    if 'anyOf' in s: return ' | '.join(_schema_str(x) for x in s['anyOf'])
    ty = s.get('type')
    if ty == 'array' and 'prefixItems' in s: return f"array[{', '.join(_schema_str(x) for x in s['prefixItems'])}]"
    if ty == 'array' and s.get('items'): return f"array[{_schema_str(s['items'])}]"
    if ty == 'object' and s.get('additionalProperties'): return f"object[string, {_schema_str(s['additionalProperties'])}]"
    if ty is None: return 'enum' if 'enum' in s else 'any'
    return ty

def _returns_str(anno: Any, doc: str | None) -> str | None:
    has_type = anno is not empty and anno is not None
    if not (has_type or doc): return None
    if has_type:
        try: ty = _schema_str(_Walker({}).schema(anno))
        except SchemaError: ty = type_name(anno)
    return f'{doc} (type: {ty})' if has_type and doc else f'type: {ty}' if has_type else doc  # pyright: ignore[reportPossiblyUnboundVariable]

# --- tools ---------------------------------------------------------------------------------------------

_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _func_of(f: Any) -> Any:
    "The plain function holding `f`'s source and docstring"
    if type(f) is FunctionType and not hasattr(f, '__wrapped__'): return f
    while isinstance(f, functools.partial): f = f.func
    f = getattr(f, '__func__', f)
    f = inspect.unwrap(f) if callable(f) else f
    return getattr(f, '__func__', f)  # a `Tool` of a method wraps the bound method

def tool_docs(
    f: ToolFn,  # a function, method, class or callable object
) -> Docs:
    "The descriptions of calling `f`: a class's fields, or a function's, method's or callable object's parameters"
    if issubclass(type(f), type): return class_docs(f, _own_init(f) if kind(f).kind == 'class' else None)  # type: ignore[arg-type]  # a class
    obj = is_callable_object(f)
    fn = _func_of(type(f).__call__ if obj else f)
    docs = func_docs(fn) if inspect.isfunction(fn) else Docs({}, {}, None, doc_text(fn))
    return docs._replace(description=docs.description or doc_text(type(f))) if obj else docs

def _unself(t: Any, f: Any) -> Any:
    "Annotation `t` with `Self` read as the class of method `f` (`-> Self` says 'returns a Builder'), inside `Optional[Self]` too"
    if not has_self(t): return t
    cls = self_class(f, _func_of(f))
    if cls is None: raise SchemaError(f"{getattr(f, '__qualname__', f)!r}: `Self` outside a class's method; annotate with the class")
    return resolve_self(t, cls)

def _folded(w: _Walker, ps: list, where: str) -> dict:
    "The schema of the tool's one parameter, a class, as the tool's own: its fields at the root (`fold=True`)"
    info = kind(ps[0].anno) if len(ps) == 1 else None
    if info is None or info.kind not in ('model', 'typeddict', 'dataclass'):
        raise SchemaError(f"{where}: fold=True needs a tool whose one parameter is a pydantic model, TypedDict or dataclass; "
                          f"it takes {[p.name for p in ps]}")
    return w.obj(info)

def _params(f: Any, where: str, skip_hidden: bool, inject: tuple) -> tuple:
    """The signature of `f`, and the parameters the model fills: injected ones (named in `inject`, or annotated with one of
    `injected_types`: `signature` says which), hidden ones and untyped `*args`/`**kwargs` left out"""
    sig = signature(f, where, inject)
    if unknown := [nm for nm in inject if nm not in {p.name for p in sig.params}]:
        raise SchemaError(f"{where!r} has no parameter {', '.join(map(repr, unknown))} to inject")
    hidden = {*inject, *sig.injected}
    ps = [p for p in sig.params if p.name not in hidden and not (skip_hidden and p.name.startswith('_')) and (p.kind not in _VAR or p.declared)]
    return sig, ps

def _tool_schema(f: Any, pname: str, evalable: bool, skip_hidden: bool, name: str | None, description: str | None, inject: tuple=(),
                 fold: bool=False) -> dict:
    where = getattr(f, '__qualname__', None) or type(f).__qualname__
    w = _Walker({}, evalable)
    if issubclass(type(f), type):
        info = kind(f)
        if info.kind in ('scalar', 'format', 'enum', 'object'):
            raise SchemaError(f"{where}: {'an' if info.kind[0] in 'aeiou' else 'a'} {info.kind} type is not a tool; give a function or a class")
        s = w.obj(info, skip_hidden)
        docs, ret = tool_docs(f), None
        desc = docs.description
    else:
        docs = tool_docs(f)
        props: dict[str, Any] = {}
        req: list[str] = []
        sig, ps = _params(f, where, skip_hidden, inject)
        for p in ([] if fold else ps):
            var = p.kind in _VAR  # `*args: int` is an array `args`, `**kwargs: str` an object `kwargs`, as openai-agents sends them
            t = var_anno(p) if var else _unself(p.anno, f)
            props[p.name] = w.prop(t, p.default, ('Parameter', p.name, where), docs.comments.get(p.name), None, docs.doc_params.get(p.name))
            if p.default is empty and not var: req.append(p.name)
        s = _folded(w, ps, where) if fold else {'type': 'object', 'properties': props}
        if req: s['required'] = req
        desc = docs.description
        # a docstring with its own returns section keeps it; otherwise the reference's `Returns:` line is added
        ret = None if docs.doc_returns is not None else _returns_str(_unself(sig.returns, f), docs.returns)
        target = type(f).__call__ if is_callable_object(f) else f
        nm = getattr(target, '__name__', None) or getattr(_func_of(target), '__name__', None)
    if description is not None: desc = description
    elif not desc and docs.only_sections:  # documented, parameters only: what it does is the model's guess
        warnings.warn(f"{where}: its docstring is only parameter sections, so the tool has no description; add a first line "
                      "saying what it does (the model reads it to decide when to call the tool)", SchemaWarning, stacklevel=caller_level())
    elif not desc: warn_undocumented('Class' if issubclass(type(f), type) else 'Function', where, ' or pass description=')
    if ret and description is None: desc = f'{desc}\n\nReturns:\n- {ret}' if desc else f'Returns:\n- {ret}'
    if w.defs: s['$defs'] = w.defs
    return {'name': name or (f.__name__ if issubclass(type(f), type) else nm), 'description': desc, pname: s}  # pyright: ignore[reportPossiblyUnboundVariable]

def _copy(o: Any) -> Any:
    "A deep copy of a schema whose defaults `marshal` can't hold (no memo: schemas are trees)"
    t = type(o)
    if t is dict: return {k: _copy(v) for k, v in o.items()}
    if t is list: return [_copy(v) for v in o]
    if t is set: return {_copy(v) for v in o}
    return o

def _freeze(s: dict) -> Any:
    "What the cache keeps of `s`: `marshal` bytes (version 2: no shared references), or a private copy"
    try: return marshal.dumps(s, 2)
    except ValueError: return _copy(s)

def _thaw(entry: Any) -> dict: return marshal.loads(entry) if type(entry) is bytes else _copy(entry)

_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # key -> {options: (version, frozen schema)}
on_types_changed(_cache.clear)

def _version(f: Any) -> tuple:
    "What a cached schema of `f` was made from, beyond `f` itself: a changed docstring or default is a new schema"
    return (getattr(f, '__doc__', None), getattr(f, '__defaults__', None), getattr(f, '__kwdefaults__', None),
            own_annotations(f))

def _cache_key(f: Any) -> tuple[Any, str]:
    "The weakly referenceable object `f`'s schema depends on, and how `f` reaches it"
    if type(f) is FunctionType: return f, ''
    if type(f) is MethodType: return f.__func__, 'method'
    if is_callable_object(f): return type(f), 'instance'
    return f, ''

# What a checker reads. The implementation's own annotations stay as the reference's example of `get_schema(get_schema)`
# shows them (`name` and `**kw` untyped: typed, they would change its schema); `docments` reads its comments.
@overload
def get_schema(f: JsonDict, pname: str = 'input_schema', evalable: bool = False, skip_hidden: bool = False, name: str | None = None,
               **kw: Any) -> JsonDict: ...
@overload
def get_schema(f: ToolFn, pname: str = 'input_schema', evalable: bool = False, skip_hidden: bool = False, name: str | None = None, *,
               description: str | None = None, inject: str | Iterable[str] = (), fold: bool = False) -> JsonDict: ...
def get_schema(
    f:ToolFn | dict, # Function to get schema for
    pname:str='input_schema', # Key name for parameters
    evalable:bool=False, # stringify defaults that can't be literal_eval'd?
    skip_hidden:bool=False, # skip parameters starting with '_'?
    name=None, # Override function name (useful for dotted paths like 'obj.method')
    **kw, # `description=`: use this instead of the docstring; `inject=`: parameters the application supplies, left out
          # unread; `fold=True`: a lone model/TypedDict/dataclass parameter's fields are the tool's own
)->dict: # {'name':..., 'description':..., pname:...}
    "Generate JSON schema for a class, function, or method"
    if issubclass(type(f), dict): return f  # type: ignore[return-value]  # a schema already (checkers don't narrow on `type(f)`)
    description, inject, fold = None, (), False
    if kw:
        description, inject, fold = kw.pop('description', None), kw.pop('inject', ()), bool(kw.pop('fold', False))
        if kw: raise TypeError(f"get_schema() got unexpected keyword arguments {sorted(kw)}")
        inject = (inject,) if isinstance(inject, str) else tuple(inject)
    if type(f) is FunctionType and (src := f.__dict__.get('__tool_schema__')) is not None:  # built by `mk_tool`: the tool's own schema
        if (why := too_deep(src['input_schema'], f"Tool {src['name']!r}: its input schema")): raise SchemaError(why)
        return {'name': name or src['name'], 'description': src['description'] if description is None else description,
                pname: _copy(src['input_schema'])}
    key, how = _cache_key(f)
    opts = (how, pname, evalable, skip_hidden, name, description, inject, fold)
    try: per_fn = _cache.get(key)  # (not `[key]`: a first schema raises and catches no `KeyError`)
    except TypeError: per_fn = None  # not weakly referenceable
    ver = _version(key)
    if per_fn is not None and (entry := per_fn.get(opts)) is not None and _same(entry[0], ver): return _thaw(entry[1])
    s = _tool_schema(f, pname, evalable, skip_hidden, name, description, inject, fold)
    if per_fn is None:
        try: per_fn = _cache.setdefault(key, {})
        except TypeError: return s  # not weakly referenceable: not cached
    per_fn[opts] = (ver, _freeze(s))  # the caller gets `s` itself; the cache keeps its own copy
    return s

def _same(a: tuple, b: tuple) -> bool: return all(x is y for x, y in zip(a, b))

def get_schema_nm(
    nm:str,              # a (dotted) name in `ns`, e.g. 'obj.method'
    ns:Namespace,        # the namespace, as `call_func` takes it: `globals()`, a list of tools, a `Toolbox`
    dot2dash:bool=False, # name the tool 'obj-method', for providers that reject dots
    **kwargs:Any,        # passed on to `get_schema`
) -> JsonDict:
    "Get schema for symbol `nm` in namespace `ns`, preserving the full dotted name"
    return get_schema(resolve_nm(nm, mk_ns(ns)), name=nm.replace('.', '-') if dot2dash else nm, **kwargs)
