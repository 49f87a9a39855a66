"""The one place that looks inside `typing` objects.

`kind(t)` classifies an annotation into a tag from `KINDS`; schema generation, input coercion and the
inverse each keep a `{kind: handler}` table over the same tags. `signature(f)` and `fields(t)` list what a
function takes and what a class is built from, with annotations resolved.
"""
from __future__ import annotations

import copy, dataclasses, datetime as dt, enum, functools, inspect, itertools, sys, types, typing
from collections import abc
from decimal import Decimal
from pathlib import Path, PurePath
from typing import Any, NamedTuple, get_args, get_origin
from uuid import UUID

__all__ = ['JsonSchema', 'code_params', 'own_annotations', 'KINDS', 'CHECKED', 'constraints', 'json_type',
           'TypeInfo', 'kind', 'custom_types', 'Param', 'Field', 'fields', 'empty', 'NoneType',
           'SchemaError', 'type_name', 'Sig', 'signature', 'injected_types', 'injected_type',
           'on_types_changed', 'type_cache', 'origin', 'is_callable_object',
           'type_has', 'instance_dict', 'is_self', 'resolve_self', 'self_class', 'has_self', 'Default', 'field_info', 'needs_pydantic', 'var_anno']

empty = inspect.Parameter.empty
NoneType = type(None)

KINDS = ('any', 'none', 'scalar', 'object', 'literal', 'enum', 'union', 'list', 'set', 'tuple', 'dict', 'format',
         'typeddict', 'namedtuple', 'dataclass', 'model', 'class')
"Every tag `kind` returns. The schema, coercion and inverse tables each cover all of them."

class _TypeSet(set[type]):
    "A set that empties the caches built on it as it changes (so no lookup has to check it first)"

def _clearing(name: str):
    def method(self, *args):
        res = getattr(set, name)(self, *args)
        for clear in _clears: clear()
        return res
    return method

for _m in ('add', 'discard', 'remove', 'pop', 'clear', 'update', 'difference_update', 'intersection_update',
           'symmetric_difference_update', '__ior__', '__iand__', '__isub__', '__ixor__'):
    setattr(_TypeSet, _m, _clearing(_m))

custom_types: _TypeSet = _TypeSet({Path, bytes, Decimal, UUID, dt.datetime, dt.date, dt.time})
"Types sent as JSON strings and built from one; add your own (constructible from a `str`)."

injected_types: _TypeSet = _TypeSet()
"""Types the application supplies at call time, never the model (`funccall.mcp` adds `MCPContext`; add your own run
context): a parameter annotated with one, a subclass, or `Optional`/`Annotated` of one, is injected, in no schema."""

def injected_type(
    t: Any,  # a resolved annotation
) -> type | None:  # the class of `injected_types` it stands for, or None
    "Whether annotation `t` is one the application supplies: a class in `injected_types` (or a subclass), through `Annotated`/`Optional`"
    if not injected_types: return None
    while type(t) is _AnnotatedAlias: t = t.__origin__
    if get_origin(t) in _union_origins:  # `Optional[Ctx]`: the context or nothing, never the model's value
        ts = [a for a in get_args(t) if a is not NoneType]
        return injected_type(ts[0]) if len(ts) == 1 else None
    if not isinstance(t, type): return None
    return next((c for c in injected_types if issubclass(t, c)), None)

class JsonSchema(dict[str, Any]):
    "JSON Schema keywords a type's schema gets as they are: `Annotated[str, JsonSchema(format='email')]`"

_NUM = {'gt': 'exclusiveMinimum', 'ge': 'minimum', 'lt': 'exclusiveMaximum', 'le': 'maximum', 'multiple_of': 'multipleOf'}
_LEN: dict[str | None, tuple[str, str]] = {
    'string': ('minLength', 'maxLength'), 'array': ('minItems', 'maxItems'), 'object': ('minProperties', 'maxProperties')}
CHECKED = {*_NUM.values(), *(k for ks in _LEN.values() for k in ks), 'pattern'}
"The JSON Schema keywords that constrain a value beyond its type, as `constraints` gives them"

def constraints(
    meta: tuple,          # `Annotated` metadata
    json_type: str | None=None,  # the value's JSON type: which length keywords apply ('string', 'array', 'object')
) -> dict:                # JSON Schema keywords from `CHECKED`
    "The constraints `Annotated` metadata puts on a value: annotated_types/pydantic objects, and `JsonSchema` keywords"
    res: dict[str, Any] = {}
    for m in meta:
        if isinstance(m, str): continue
        if isinstance(m, JsonSchema):
            res.update((k, v) for k, v in m.items() if k in CHECKED); continue
        for c in (m, *(getattr(m, 'metadata', None) or ())):  # `annotated_types.Ge(0)`, `Interval(...)`, pydantic's `Field(...)`
            for k, jk in _NUM.items():
                if (v := getattr(c, k, None)) is not None and not callable(v): res[jk] = v
            if (lens := _LEN.get(json_type)):
                if (v := getattr(c, 'min_length', None)) is not None: res[lens[0]] = v
                if (v := getattr(c, 'max_length', None)) is not None: res[lens[1]] = v
            if isinstance(v := getattr(c, 'pattern', None), str): res['pattern'] = v
    return res

class SchemaError(TypeError):
    "A function or type that funccall can't describe to a model: a mistake in the developer's code"

class TypeInfo(NamedTuple):
    kind: str        # a tag from `KINDS`
    t: Any           # the annotation, with `Annotated`/`Required`/`NewType` wrappers removed
    args: tuple[Any, ...] = () # members of a union, items of a container, values of a literal, (key, value) of a dict
    meta: tuple[Any, ...] = () # `Annotated` metadata, outermost last

_scalars = (bool, int, float, str)
_list_origins = {list, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection, abc.Iterator, abc.Generator}
_set_origins = {set, frozenset, abc.Set, abc.MutableSet}
_dict_origins = {dict, abc.Mapping, abc.MutableMapping}
_wrappers = {typing.ClassVar, typing.Final}
for _nm in ('Required', 'NotRequired', 'ReadOnly'):
    for _mod in (typing, sys.modules.get('typing_extensions')):
        if _mod is not None and hasattr(_mod, _nm): _wrappers.add(getattr(_mod, _nm))
_union_origins = {typing.Union, types.UnionType}
_literals = {typing.Literal}
if (_te := sys.modules.get('typing_extensions')) is not None: _literals.add(_te.Literal)

def _is_typeddict(t) -> bool: return isinstance(t, type) and issubclass(t, dict) and hasattr(t, '__required_keys__')
def _is_namedtuple(t) -> bool: return isinstance(t, type) and issubclass(t, tuple) and hasattr(t, '_fields')
# the string formats with a meaning of their own, most derived first (a datetime is a date); `args[0]` of a 'format' kind
_format_bases = (dt.datetime, dt.date, dt.time, UUID, Decimal, bytes, PurePath)

def _format_base(t) -> type:
    "The standard type a string-format class is one of, or itself (a custom type built from a `str`)"
    return next((b for b in _format_bases if isinstance(t, type) and issubclass(t, b)), t)

def _is_ndarray(t) -> bool:
    "numpy's array class, checked without importing numpy"
    np = sys.modules.get('numpy')
    return np is not None and t is np.ndarray

def _is_model(t) -> bool:
    "A pydantic model class, checked without importing pydantic"
    pd = sys.modules.get('pydantic')
    return pd is not None and isinstance(t, type) and issubclass(t, pd.BaseModel)

class TypeCache:
    """A cache keyed by annotation that keeps `Union[a, b]` and `Union[b, a]` apart.

    `typing` compares unions and literals as sets, so `dict` keys would mix up their order (and so the order
    of `anyOf` and of coercion attempts). Annotations with a union or literal inside are keyed on their arguments' order too.
    """
    def __init__(self, make): self.make, self.plain, self.ordered = make, {}, {}

    def __call__(self, t):
        if type(t) in _ordered_types: return self._ordered(_ordered_key(t), t)  # (never among the plain keys)
        try: return self.plain[t]
        except KeyError: pass
        except TypeError: return self.make(t)  # unhashable, e.g. `Annotated[int, {'a': 1}]`
        if _order_matters(t): return self._ordered(_ordered_key(t), t)
        return self._put(self.plain, t, self.make(t))

    def _ordered(self, k, t):
        try: v = self.ordered.get(k, _absent)
        except TypeError: return self.make(t)  # a Literal of an unhashable value
        return self._put(self.ordered, k, self.make(t)) if v is _absent else v

    def _put(self, d: dict, k, v):
        "`d[k] = v`, first dropping the older half of the fuller dict when the cache is full: bounded, and what is in use comes back at once"
        if len(self) >= _MAX_CACHE:
            full = max(self.plain, self.ordered, key=len)
            for old in list(itertools.islice(full, len(full) // 2)): full.pop(old, None)
        d[k] = v
        return v

    def __len__(self): return len(self.plain) + len(self.ordered)
    def clear(self): self.plain.clear(); self.ordered.clear()

_absent = object()
_MAX_CACHE = 4096  # entries per cache: they hold annotations strongly, and classes made at run time (`mk_tool`) come and go

def _ordered_key(t):
    "`t` with the order of its arguments, recursively: `Union[None, X]` and `Optional[X]` even print alike"
    ty = type(t)
    if ty is type: return t  # a class: no arguments
    if ty is _literal_alias: return _literal_key(t)
    # a union is its members in order (`Union[a, b]` and `a | b` alike): not hashed itself, which makes a set of them in Python
    if ty in _ordered_types: return typing.Union, tuple([_ordered_key(a) for a in t.__args__])
    args = get_args(t)
    return (t, tuple([_ordered_key(a) for a in args])) if args else t

_literal_alias = type(typing.Literal[0])
_ordered_types = frozenset((_literal_alias, type(typing.Union[int, str]), types.UnionType))  # whose order always matters

def _literal_key(t) -> tuple:
    """A `Literal`'s key: its values, each with its type (`Literal[1]` is not `Literal[True]`), in order. Hashing the
    `Literal` itself makes a set of them in Python each time, three times the cost; a key is made once per schema"""
    args = t.__args__
    return _literal_alias, tuple(zip(map(type, args), args))

def _order_matters(t) -> bool:
    o = get_origin(t)
    if o in _union_origins or o in _literals: return True
    return o is not None and any(_order_matters(a) for a in get_args(t))

_clears: list = []  # how to empty each cache built on `kind`'s answers, when those answers may change

def type_cache(make) -> TypeCache:
    "A `TypeCache` of `make(t)`, emptied when `custom_types` changes"
    c = TypeCache(make)
    _clears.append(c.clear)
    return c

def on_types_changed(clear) -> None:
    "Register `clear`, called when `custom_types` changes, so caches built on `kind` are rebuilt"
    _clears.append(clear)

def kind(
    t: Any,  # an annotation
) -> TypeInfo:
    "Classify annotation `t` into a `TypeInfo` whose `kind` is a tag from `KINDS`"
    if type(t) in _ordered_types: return _kinds(t)  # a union or Literal: never among the plain keys
    try: return _kinds.plain[t]  # the common case, inlined: `kind` runs for every annotation of every schema
    except (KeyError, TypeError): return _kinds(t)

def _kind(t: Any) -> TypeInfo:
    meta = ()
    while True:  # peel the wrappers that carry no shape of their own
        o = get_origin(t)
        if o is typing.Annotated: meta, t = t.__metadata__ + meta, t.__origin__
        elif o in _wrappers: t = get_args(t)[0]
        elif isinstance(t, typing.NewType): t = t.__supertype__
        elif isinstance(t, typing.TypeVar): t = t.__bound__ if t.__bound__ is not None else Any
        else: break
    info = _classify(t, o)
    if meta and info.kind == 'union': info, meta = _inward(info, meta)
    return info._replace(meta=meta) if meta else info

_kinds = type_cache(_kind)

def json_type(
    info: TypeInfo,  # what `kind` gave
) -> str | None:     # 'string', 'integer', 'number', 'array' or 'object'; None for any other (a union, a literal, a format...)
    "The JSON type a value of `info` travels as, which says what a length constraint counts (characters, items or properties)"
    if info.kind == 'scalar': return {str: 'string', int: 'integer', float: 'number'}.get(info.args[0])
    if info.kind in ('list', 'set', 'tuple'): return 'array'
    if info.kind in ('dict', 'typeddict', 'dataclass', 'model', 'class', 'namedtuple'): return 'object'
    return None

def _inward(info: TypeInfo, meta: tuple) -> tuple:
    """A union's `info` and `meta` with the constraints moved onto the members they apply to, where pydantic applies
    them: `Annotated[Optional[str], Field(max_length=5)]` is `Optional[Annotated[str, MaxLen(5)]]`, and in
    `Annotated[str | int | None, Field(max_length=5)]` the length bounds the string (it bounds nothing on the whole,
    which has no one JSON type); the field's description (and title, examples) kept on the whole. `JsonSchema` keywords
    stay where they are written: raw JSON Schema."""
    ts = [a for a in info.args if a is not NoneType]
    if not ts or len(info.args) == 1 or needs_pydantic(meta): return info, meta  # pydantic validates it all, as written
    jts = [json_type(kind(a)) for a in ts]
    def applies(c) -> bool:  # (over several members, only a length moves: the others apply to the whole as written)
        return any(constraints((c,), jt) for jt in jts) and (len(ts) == 1 or not constraints((c,), None))
    moved, kept = [], []
    for m in meta:
        if isinstance(m, (str, JsonSchema)): kept.append(m)
        elif field_info(m) and (inner := [c for c in m.metadata if applies(c)]):
            moved += inner
            m = copy.copy(m)  # (the caller's `Field` is left as it is)
            m.metadata = [c for c in m.metadata if not applies(c)]
            kept.append(m)
        elif not field_info(m) and applies(m): moved.append(m)
        else: kept.append(m)
    if not moved: return info, meta
    members = {a: typing.Annotated[(a,) + tuple(own)] for a, jt in zip(ts, jts) if (own := [c for c in moved if constraints((c,), jt)])}
    return info._replace(args=tuple(members.get(a, a) for a in info.args)), tuple(kept)

def _classify(t, o) -> TypeInfo:
    args = get_args(t)
    if t is Any or t is empty: return TypeInfo('any', t)
    if t is None or t is NoneType: return TypeInfo('none', NoneType)
    if o in _union_origins: return TypeInfo('union', t, args)
    if o in _literals: return TypeInfo('literal', t, args)
    if t in custom_types: return TypeInfo('format', t, (_format_base(t),))
    if isinstance(t, str) or isinstance(t, typing.ForwardRef):
        raise SchemaError(f"Unresolved forward reference {t!r}; define it at module level so it can be resolved")
    base = o or t
    if base is tuple:
        if args == ((),): args = ()  # `tuple[()]`, the empty tuple, on 3.10
        elif not args and (t is tuple or t is typing.Tuple): return TypeInfo('tuple', t, (Any, Ellipsis))
        return TypeInfo('tuple', t, args)
    if base in _list_origins: return TypeInfo('list', t, args[:1] or (Any,))
    if base in _set_origins: return TypeInfo('set', t, args[:1] or (Any,))
    if base in _dict_origins: return TypeInfo('dict', t, args if len(args) == 2 else ())
    if base is abc.Callable or t is callable or base is type: return TypeInfo('object', t)
    if not isinstance(t, type): raise SchemaError(f"Can't make a schema for {t!r}; use a concrete type or register it in custom_types")
    if t is object: return TypeInfo('object', t)
    if issubclass(t, enum.Enum): return TypeInfo('enum', t)
    if t in _scalars: return TypeInfo('scalar', t, (t,))
    if _is_typeddict(t): return TypeInfo('typeddict', t)
    if _is_namedtuple(t): return TypeInfo('namedtuple', t)
    if dataclasses.is_dataclass(t): return TypeInfo('dataclass', t)
    if _is_model(t): return TypeInfo('model', t)
    if _is_ndarray(t): return TypeInfo('list', t, (Any,))  # a numpy array travels as a (nested) JSON array
    if issubclass(t, PurePath): return TypeInfo('format', t, (PurePath,))
    if issubclass(t, _scalars): return TypeInfo('scalar', t, (next(s for s in _scalars if issubclass(t, s)),))
    if t.__module__ == 'builtins': raise SchemaError(f"Can't make a schema for {t!r}; use a JSON type (str, int, float, bool, list, dict)")
    if _built_in_c(t):
        raise SchemaError(f"Can't make a schema for {t!r}: its constructor is written in C, so its fields can't be read; "
                          "use a JSON type, or supply it from the application (Tool(f, inject=...))")
    return TypeInfo('class', t)

def _built_in_c(t: type) -> bool:
    "Whether class `t` is made by a constructor written in C (`sqlite3.Connection`): no Python `__init__` or `__new__` says its fields"
    init = next((_cdict(k)['__init__'] for k in _mro(t) if '__init__' in _cdict(k)), None)
    new = next((_cdict(k)['__new__'] for k in _mro(t) if '__new__' in _cdict(k)), None)
    if init is object.__init__: return not (new is object.__new__ or isinstance(new, staticmethod))
    return not isinstance(init, types.FunctionType)

def origin(t):
    "The class behind a parametrised annotation: `frozenset` for `frozenset[int]`"
    return get_origin(t) or t

def type_name(t) -> str:
    "Short readable name of annotation `t`, for messages"
    if t is NoneType: return 'None'
    if isinstance(t, type) and not get_args(t): return t.__name__
    return repr(t).replace('typing.', '')

# --- resolving annotations ---------------------------------------------------------------------------

def _localns(obj) -> dict:
    "Names a string annotation of `obj` may refer to beyond its module: its closure, or the class itself"
    ns = {}
    code = getattr(obj, '__code__', None)
    if code is not None and code.co_freevars and obj.__closure__:
        for nm, cell in zip(code.co_freevars, obj.__closure__):
            try: ns[nm] = cell.cell_contents
            except ValueError: pass  # an empty cell
    if isinstance(obj, type): ns.setdefault(obj.__name__, obj)
    return ns

def own_annotations(
    obj,                   # a function or class
    missing=None,          # what to give when there are none
):                         # its `__annotations__` dict itself (not a copy), or `missing`
    "`obj.__annotations__`, read from a class's own dict: `getattr` on a class without any would store an empty one there"
    if issubclass(type(obj), type): return type.__dict__['__dict__'].__get__(obj).get('__annotations__') or missing
    return getattr(obj, '__annotations__', None) or missing

def _has_fwd(a) -> bool:
    "Whether annotation `a` holds a string or `ForwardRef` anywhere"
    t = type(a)
    if t is type or t is _literal_alias: return False  # (a Literal's strings are its values, not names to resolve)
    if t is types.GenericAlias or t in _ordered_types: args = a.__args__  # `list[X]`, a union: what `get_args` gives, read at once
    else:
        if isinstance(a, (str, typing.ForwardRef)): return True
        o = get_origin(a)
        if o is None or o in _literals: return False  # a Literal's strings are its values, not names to resolve
        args = get_args(a)
    for x in args:
        if _has_fwd(x): return True
    return False

def _hints(obj, where: str) -> dict:
    "Annotations of function or class `obj`, forward references resolved (only when there are any)"
    annos = own_annotations(obj, {})
    for a in annos.values():
        if _has_fwd(a): break
    else: return annos
    try:
        # 3.10's `get_type_hints` also makes a parameter with a `None` default `Optional`: read a function's as later versions do
        if sys.version_info < (3, 11) and not issubclass(type(obj), type): return _resolve_nested(obj, annos)
        hints = typing.get_type_hints(obj, localns=_localns(obj), include_extras=True)
        if sys.version_info < (3, 11) and any(_has_fwd(a) for a in hints.values()): hints = _resolve_nested(obj, hints)
        return hints
    except NameError as e:
        raise SchemaError(f"{where}: an annotation names {e.name!r}, which is not defined in its module; define it at module level") from None
    except Exception as e: raise SchemaError(f"{where}: can't evaluate its annotations ({e})") from None

def _resolve_nested(obj, hints: dict) -> dict:
    "Python 3.10's `get_type_hints` leaves the string in `list['Node']` as it is; resolve it as later versions do"
    glb = getattr(obj, '__globals__', None) or vars(sys.modules.get(getattr(obj, '__module__', None), typing))  # type: ignore[arg-type]
    loc = _localns(obj)
    def res(a):
        if isinstance(a, typing.ForwardRef): a = a.__forward_arg__
        if isinstance(a, str): return res(eval(a, glb, loc))  # noqa: S307 - what `get_type_hints` does with an annotation
        if get_origin(a) is typing.Annotated: return typing.Annotated[(res(a.__origin__),) + a.__metadata__]  # metadata strings are docs
        if get_origin(a) in _literals: return a  # its strings are values
        args = get_args(a)
        if not args or not _has_fwd(a): return a
        new = tuple(res(x) for x in args)
        if isinstance(a, types.GenericAlias): return types.GenericAlias(get_origin(a), new)
        if isinstance(a, types.UnionType): return typing.Union[new]
        return a.copy_with(new) if hasattr(a, 'copy_with') else a
    return {k: res(v) for k, v in hints.items()}

# --- parameters of callables ------------------------------------------------------------------------

_AnnotatedAlias: Any = type(typing.Annotated[int, 0])  # (`Any`: to checkers it is a special form with no `__metadata__`)

def field_info(v) -> bool:
    "Whether `v` is pydantic's `FieldInfo` (what `Field(...)` gives), checked without importing pydantic"
    t = type(v)
    return t.__name__ == 'FieldInfo' and t.__module__ == 'pydantic.fields'

_VALIDATORS = {'pydantic.functional_validators': {'AfterValidator', 'BeforeValidator', 'PlainValidator', 'WrapValidator'},
               'annotated_types': {'Predicate', 'Not'}, 'pydantic.types': {'Strict'}}

def needs_pydantic(
    meta: tuple,  # `Annotated` metadata
) -> bool:        # whether it holds a check only pydantic can run: a validator function, strict mode, a string transform
    "Whether `meta` asks for more than the JSON Schema keywords `constraints` gives: then pydantic validates the value"
    for m in meta:
        for c in (m, *(m.metadata if field_info(m) else ())):  # `Field(strict=True)` holds a `Strict()`
            t = type(c)
            if t.__name__ in _VALIDATORS.get(t.__module__, ()) and getattr(c, 'strict', True): return True
            if t.__name__ == 'StringConstraints' and any(getattr(c, k, None) for k in ('strip_whitespace', 'to_upper', 'to_lower')): return True
    return False

class Default(NamedTuple):
    "A default the call supplies itself, as the function's own is pydantic's `FieldInfo` (or there is none, the default being in `Annotated`)"
    value: Any = empty  # the default, or `empty` when `factory` makes it
    factory: Any = None # pydantic's `default_factory`, called afresh for each call
    takes_data: bool = False  # whether `factory` takes the other arguments (pydantic's `default_factory=lambda data: ...`)

    def make(self, data: dict):
        "The value for one call, the other arguments being `data`: made afresh, so a call that changes it changes no other call's"
        if self.factory is not None: return self.factory(dict(data)) if self.takes_data else self.factory()
        return self.value if type(self.value) in _immutable else copy.deepcopy(self.value)

    def shown(self):
        "What a schema shows: the value, or what an empty container's factory makes; else `empty` (a factory's value varies)"
        if self.factory is None: return self.value
        return self.factory() if self.factory in _container_factories else empty

def _field_default(fi):
    "The default a pydantic `FieldInfo` gives a parameter: `empty` when it is required"
    if fi.is_required(): return empty
    if fi.default_factory is None: return Default(fi.default)
    return Default(factory=fi.default_factory, takes_data=bool(getattr(fi, 'default_factory_takes_validated_data', False)))

def _from_field(anno, default) -> tuple:
    """A parameter's annotation and default as pydantic reads them: `x: int = Field(ge=0)` is `Annotated[int, Field(ge=0)]`
    with the field's default; `Annotated[float, Field(default=5.0)]` with no default of its own has 5.0"""
    if field_info(default): return typing.Annotated[(Any if anno is empty else anno), default], _field_default(default)
    if default is empty and type(anno) is _AnnotatedAlias:
        for m in reversed(anno.__metadata__):
            if field_info(m) and not m.is_required(): return anno, _field_default(m)
    return anno, default

def var_anno(
    p: Param,  # a `Param` of kind `VAR_POSITIONAL` (`*args: int`) or `VAR_KEYWORD` (`**kwargs: str`)
) -> Any:      # what the model sends for it: `list[int]`, `dict[str, str]`
    "The annotation of the one JSON value that holds what a `*args` or `**kwargs` parameter takes"
    return list[p.anno] if p.kind is _P.VAR_POSITIONAL else dict[str, p.anno]  # type: ignore[name-defined]  # a type made at run time

class Param(NamedTuple):
    name: str
    anno: Any       # resolved annotation; the default's type, as docments does, when there is none; else `empty`
    default: Any    # `empty` when required; a `Default` when the call must supply it (pydantic's `Field`)
    kind: Any       # an `inspect.Parameter` kind
    declared: bool = True  # whether `anno` was written in the signature (not taken from the default)

# Reading a class's MRO and dict through `type`'s own descriptors runs no code of the caller's metaclass
_mro, _cdict = type.__dict__['__mro__'].__get__, type.__dict__['__dict__'].__get__

def type_has(
    t: type,  # a class
    nm: str,  # an attribute name
) -> bool:    # whether `t` or a base defines `nm` in its class dict
    "`hasattr(t, nm)` read from the class dicts: no metaclass `__getattr__` or property runs"
    return any(nm in _cdict(k) for k in _mro(t))

def instance_dict(
    o,       # any object
) -> dict:   # its own `__dict__`, or {} when it has none (or only a `__dict__` of the caller's making)
    "`o.__dict__` read through the interpreter's own descriptor: a `__dict__` property of the caller's never runs"
    for k in _mro(type(o)):
        d = _cdict(k).get('__dict__')
        if type(d) is types.GetSetDescriptorType:
            try: res = d.__get__(o)
            except (AttributeError, TypeError): return {}
            return res if type(res) is dict else {}
    return {}

_routines = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodWrapperType,
             types.MethodDescriptorType, types.ClassMethodDescriptorType, type, functools.partial)

def is_callable_object(f) -> bool:
    "An instance called through its class's `__call__`: not a function, method, class or partial, nor declaring its signature"
    t = type(f)  # `type`, never `isinstance`: a `__class__` property of the caller's would run
    if t is types.FunctionType or not callable(f) or issubclass(t, _routines): return False
    if type_has(t, '__get__') and not type_has(t, '__set__'): return False  # a method descriptor, as `inspect.isroutine` says
    return '__signature__' not in instance_dict(f) and not type_has(t, '__signature__')

def _target(f):
    "The function whose signature describes calling `f`, and whether its first parameter is bound"
    if issubclass(type(f), type): return f.__init__, True
    if is_callable_object(f):
        call = type(f).__call__
        return (types.MethodType(call, f) if type(call) is types.FunctionType else f.__call__), False
    return f, False

_P = inspect.Parameter

def code_params(fn: Any) -> list[tuple[str, Any, Any]]:
    "(name, default, kind) of a plain Python function, read off its code object: `inspect.signature` costs 5x more"
    code, dflts, kwdflts = fn.__code__, fn.__defaults__ or (), fn.__kwdefaults__ or {}
    n, npos, nkw, vn = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_varnames
    res: list[tuple[str, Any, Any]]
    first_dflt, res = n - len(dflts), []
    for i in range(n):
        res.append((vn[i], dflts[i - first_dflt] if i >= first_dflt else empty, _P.POSITIONAL_ONLY if i < npos else _P.POSITIONAL_OR_KEYWORD))
    i = n + nkw
    if code.co_flags & inspect.CO_VARARGS: res.append((vn[i], empty, _P.VAR_POSITIONAL)); i += 1
    res += [(nm, kwdflts.get(nm, empty), _P.KEYWORD_ONLY) for nm in vn[n:n + nkw]]
    if code.co_flags & inspect.CO_VARKEYWORDS: res.append((vn[i], empty, _P.VAR_KEYWORD))
    return res

def _without(fn: types.FunctionType, skip) -> types.FunctionType:
    "A copy of `fn` whose annotations leave out those of the parameters in `skip`: resolving the rest can't fail on theirs"
    view = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    view.__annotations__ = {k: v for k, v in own_annotations(fn, {}).items() if k not in skip}
    return view

_tuple_new = tuple.__new__

class Sig(NamedTuple):
    params: list    # `Param`s, `self` left out
    returns: Any    # the return annotation, `empty` when there is none
    injected: tuple = ()  # the names of the parameters annotated with one of `injected_types`: the application's, never the model's

def signature(
    f,                       # a function, method, class or callable object
    where: str | None=None,  # how to name it in errors
    skip=(),                 # parameters whose annotations are not read (injected ones: their types are the application's)
) -> Sig:
    "Parameters and return annotation of function, method, class or callable object `f`, annotations resolved"
    target, drop_first = _target(f)
    where = where or repr(getattr(f, '__qualname__', f))
    if type(target) is types.MethodType and type(target.__func__) is types.FunctionType: target, drop_first = target.__func__, True
    fn: Any
    if type(target) is types.FunctionType and not hasattr(target, '__wrapped__') and not hasattr(target, '__signature__'):
        ps, fn = code_params(target), target
    else:
        try: sig = inspect.signature(target)
        except (TypeError, ValueError) as e: raise SchemaError(f"{where}: can't read its signature ({e})") from None
        ps, fn = [(p.name, p.default, p.kind) for p in sig.parameters.values()], target
        while isinstance(fn, functools.partial): fn = fn.func
        fn = inspect.unwrap(getattr(fn, '__func__', fn))
        fn = getattr(fn, '__func__', fn)  # a `Tool` of a method wraps the bound method: its annotations are its function's
        if not isinstance(fn, types.FunctionType): fn = target
    annos = own_annotations(fn, {})
    if skip and type(fn) is types.FunctionType and any(k in annos for k in skip): fn = _without(fn, skip)
    try: hints = _hints(fn, where)
    except SchemaError:
        if not _has_fwd(annos.get('return')): raise
        # an unresolvable return annotation only costs the description its `Returns:` line
        hints = _hints(types.SimpleNamespace(__annotations__={k: v for k, v in annos.items() if k != 'return'}), where)
    by_name = ps and ps[0][0] == 'self' and not hasattr(target, '__signature__')  # a declared signature's `self` is a parameter
    if ps and (drop_first or by_name) and ps[0][2] <= _P.POSITIONAL_OR_KEYWORD: ps = ps[1:]
    if any(map(has_self, hints.values())) and (cls := self_class(f, fn)) is not None:
        hints = {k: resolve_self(a, cls) for k, a in hints.items()}  # the call builds what the schema shows: the class
    res = []
    for nm, default, k in ps:
        anno = empty if nm in skip else hints.get(nm, empty)
        if type(anno) is _AnnotatedAlias or (default is not empty and field_info(default)): anno, default = _from_field(anno, default)
        declared = anno is not empty
        if not declared and default is not empty: anno = type(default)  # as docments does
        res.append(_tuple_new(Param, (nm, anno, default, k, declared)))  # (a NamedTuple's own `__new__` is Python: 3x slower)
    injected = tuple(p.name for p in res if injected_type(p.anno) is not None) if injected_types else ()
    return _tuple_new(Sig, (res, hints.get('return', empty), injected))

# --- fields of classes --------------------------------------------------------------------------------

class Field(NamedTuple):
    name: str        # the key the JSON object uses (a pydantic alias when there is one)
    anno: Any
    default: Any     # `empty` when there is none to show; a `Default` when building the object must supply it
    required: bool
    doc: str | None  # a description declared with the field itself (pydantic `Field`, dataclass metadata)
    attr: str        # the Python name, to build the object with

_container_factories = (list, dict, set, tuple, frozenset)

def _td_required(nm: str, a, t) -> bool:
    "Whether key `nm` of TypedDict `t` is required; an explicit `Required`/`NotRequired` wins over `__required_keys__`"
    # Python computes `__required_keys__` wrongly when those wrappers are written as strings
    while get_origin(a) is typing.Annotated: a = get_args(a)[0]
    wrapper = getattr(get_origin(a), '_name', None) or getattr(a, '_name', None)
    if get_origin(a) in _wrappers and wrapper in ('Required', 'NotRequired'): return wrapper == 'Required'
    return nm in t.__required_keys__

_literal_defaults = (NoneType, bool, int, float, list, dict, tuple)
_immutable = frozenset((NoneType, bool, int, float, str, bytes))

def _td_default(a):
    "langchain's convention for a TypedDict key, `Annotated[T, default, \"description\"]`: its default (`...`: none, so `empty`)"
    while get_origin(a) in _wrappers: a = get_args(a)[0]
    meta: tuple[Any, ...] = a.__metadata__ if type(a) is _AnnotatedAlias else ()
    if len(meta) == 2 and isinstance(meta[1], str) and type(meta[0]) in _literal_defaults: return Default(meta[0])
    return empty

def fields(info: TypeInfo) -> list[Field]:
    "Fields of a class kind (`typeddict`, `namedtuple`, `dataclass`, `model`, `class`)"
    t, where = info.t, f'class {info.t.__qualname__!r}'
    if info.kind == 'dataclass':
        hints, res = _hints(t, where), []
        for f in dataclasses.fields(t):
            if not f.init: continue
            if f.default is not dataclasses.MISSING: default = f.default
            elif f.default_factory in _container_factories: default = f.default_factory()
            else: default = empty
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            res.append(Field(f.name, hints.get(f.name, f.type), default, required, f.metadata.get('description'), f.name))
        return res
    if info.kind == 'typeddict':
        res = []
        for nm, a in _hints(t, where).items():
            default = _td_default(a)
            res.append(Field(nm, a, default, _td_required(nm, a, t) and default is empty, None, nm))
        return res
    if info.kind == 'namedtuple':
        own = next((c for c in t.__mro__ if '_fields' in vars(c)), t)  # (a NamedTuple's subclass: its fields are its base's)
        hints, dflt = _hints(own, where), t._field_defaults
        return [Field(nm, hints.get(nm, Any), dflt.get(nm, empty), nm not in dflt, None, nm) for nm in t._fields]
    if info.kind == 'model':
        res = []
        for nm, f in t.model_fields.items():
            anno = typing.Annotated[(f.annotation,) + tuple(f.metadata)] if f.metadata else f.annotation
            required = f.is_required()
            if required: default = empty
            elif f.default_factory is not None: default = f.default_factory() if f.default_factory in _container_factories else empty
            else: default = f.default
            res.append(Field(f.alias or nm, anno, default, required, f.description, nm))
        return res
    sig = signature(t, where)
    return [Field(p.name, p.anno, p.default, p.default is empty, None, p.name) for p in sig.params
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) and p.name not in sig.injected]


def has_self(t) -> bool:
    "Whether annotation `t` holds `typing.Self` anywhere inside (where `resolve_self` would replace it; asked of every annotation)"
    ty = type(t)
    if ty is type or ty is _literal_alias: return False  # a plain class (most annotations), a Literal's values
    if ty is types.GenericAlias or ty in _ordered_types: args = t.__args__  # `list[X]`, a union: read at once
    else:
        if is_self(t): return True
        if not (args := get_args(t)) or (o := get_origin(t)) is typing.Literal: return False
        if o is typing.Annotated: return has_self(args[0])
    for a in args:
        if has_self(a): return True
    return False

def self_class(
    f,   # a method, callable object or class, as `signature` takes it
    fn,  # the plain function behind it
):       # the class, or None when `f` isn't in one
    "The class `typing.Self` stands for in `f`'s annotations: its instance's or class's, or the one its qualified name names"
    if issubclass(type(f), type): return f
    if type(f) is types.MethodType: return f.__self__ if isinstance(f.__self__, type) else type(f.__self__)
    if is_callable_object(f): return type(f)
    qn, o = getattr(fn, '__qualname__', ''), sys.modules.get(getattr(fn, '__module__', None) or '')
    if type(qn) is not str or '.' not in qn or '<locals>' in qn: return None
    for part in qn.split('.')[:-1]: o = getattr(o, part, None)
    return o if isinstance(o, type) else None

def is_self(t) -> bool:
    "Is `t` `typing.Self` (or typing_extensions')? Both are special forms: anything else is told apart without its repr"
    return type(t).__name__ == '_SpecialForm' and repr(t) in ('typing.Self', 'typing_extensions.Self')

def resolve_self(
    t,    # an annotation of a method
    cls,  # the class `Self` stands for
):        # `t` with `Self` read as `cls`, wherever it is inside (`Optional[Self]`, `list[Self]`); `t` itself when it has none
    "Annotation `t` with `typing.Self` replaced by class `cls`"
    if type(t) is type: return t  # a plain class (most annotations): no Self inside
    if is_self(t): return cls
    if not (args := get_args(t)) or get_origin(t) is typing.Literal: return t
    if get_origin(t) is typing.Annotated:
        inner = resolve_self(args[0], cls)
        return t if inner is args[0] else typing.Annotated[(inner,) + t.__metadata__]
    new = tuple(resolve_self(a, cls) for a in args)
    if all(a is b for a, b in zip(new, args)): return t
    if get_origin(t) in (typing.Union, types.UnionType): return typing.Union[new]
    return t.copy_with(new) if hasattr(t, 'copy_with') else types.GenericAlias(get_origin(t), new)
