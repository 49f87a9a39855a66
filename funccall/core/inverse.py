"""From JSON tool schemas back to Python: signatures and checked callables (an MCP server's tools, say).

The tool's input schema is the contract. `mk_tool(dispfn, tool)` builds a function whose parameters are the
schema's properties and whose calls go to `dispfn(tool_name, /, **arguments)` under the schema's own property
names, with the JSON values given, unchanged: explicit nulls, the caller's strings, extra keys where the schema
allows them. A caller may pass Python values (`datetime`, `UUID`, `Path`, `Decimal`, Enum members, dataclasses,
NamedTuples, pydantic models, sets, tuples): they are sent in their JSON form. Arguments the schema forbids are
refused before dispatch by funccall's JSON Schema validator, with the schema's own semantics and draft, in one
`ToolInputError` that lists every problem with its path.

The signature is the face the tool shows to Python (`inspect`, IDEs): plain annotations (`str`, `list[int]`,
`Literal[...]`, unions, a `TypedDict` for an object with properties); what has no Python type is `Any`. A string
is `str` whatever its `format`: what is sent is the caller's text, so nothing (not `call_func` either) should
parse it into a `datetime` or `UUID` and write it out again differently. The tool's own schema stays with the function (`fn.__tool_schema__`), so
`get_schema(fn)` gives back its descriptions, defaults and constraints exactly.

Speed and memory: building a tool does only what its signature needs (its `Parameter`s are made when something reads
them); its code comes from a template compiled once per number of parameters, renamed for the tool. A call tests each
argument it gives with a quick test made when that argument is first given (closures: exact types, lengths, bounds,
plain patterns, string enums as set membership, local `$ref`s, as deep as values go); a tool called again and again
gets code of its own with the tests written out, shared by every tool of the same shape. A call whose arguments are
plain JSON values its schema certainly accepts goes straight to the dispatcher, as keywords; anything else goes the
checked way, whose validator is compiled when a call first needs it.
"""
from __future__ import annotations

import functools, keyword, re, types, typing, unicodedata, weakref
from inspect import Parameter, Signature, iscoroutinefunction
from typing import Annotated, Any, Callable, Literal, Optional, Protocol, Union
from collections.abc import Collection, Sequence
from urllib.parse import unquote

from ._inputs import Problem, ToolInputError, short
from ._json import is_json, jsonable
from ._regex import budgeted, longest as re_longest
from ._source import source_name
from ._typing import JsonDict

if typing.TYPE_CHECKING: from ._jsonschema import Validator  # (imported where needed at run time: the validator imports the schema module)

__all__ = ['mk_param', 'schema2sig', 'mk_tool', 'schema2anno', 'tool_parts', 'BuiltTool']

empty = Parameter.empty
_NoneType = type(None)

class BuiltTool(Protocol):
    """What `mk_tool` gives: a function with the tool's signature, name and description, whose call returns what the
    dispatcher returns (awaitable when it is async)"""
    __name__: str
    __signature__: Signature
    __tool_schema__: JsonDict  # the tool's own schema: `get_schema` gives it back exactly
    __source__: str            # the generated code it runs now (README: "Reading the generated code")
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

# --- accepting every tool form ------------------------------------------------------------------------

def _get(o, *names):
    for nm in names:
        if isinstance(o, dict):
            if nm in o: return o[nm]
        elif (v := getattr(o, nm, None)) is not None: return v
    return None

def tool_parts(
    tool: Any,  # an MCP `Tool` (1.x `inputSchema` or 2.x `input_schema`), or a dict in any format funccall emits
) -> tuple[str, str, JsonDict]:  # name, description, input schema
    "The name, description and input schema of `tool`, whatever its format; ValueError when they are not text and an object"
    if isinstance(tool, dict) and tool.get('type') == 'function' and isinstance(tool.get('function'), dict): tool = tool['function']
    # the SDK's own name first: once fastmcp is imported, reading `inputSchema` off the SDK's `Tool` warns
    nm, desc, s = _get(tool, 'name'), _get(tool, 'description'), _get(tool, 'input_schema', 'inputSchema', 'parameters')
    if nm is None: nm = ''
    if not isinstance(nm, str): raise ValueError(f"A tool's name must be a string, got {short(nm, 60)}")
    if desc is None: desc = ''
    if not isinstance(desc, str): raise ValueError(f"Tool {nm!r}: the description must be a string, got {short(desc, 60)}")
    if s is None or s is True: s = {'type': 'object', 'properties': {}}
    elif type(s) is not dict:
        if hasattr(s, 'model_dump'): s = s.model_dump()
        elif isinstance(s, dict):  # fastcore's `dict2obj` (AttrDict, L): plain dicts and lists from here on
            try: s = _plain(s)
            except RecursionError: raise ValueError(f"Tool {nm!r}: the input schema is nested too deeply to read") from None
        else: raise ValueError(f"Tool {nm!r}: the input schema must be a JSON object, got {short(s, 60)}")
    return nm, desc, s  # pyright: ignore[reportReturnType]  # (a dict by now: the branches above made it one or raised)

def _plain(v):
    "`v` with every mapping a dict and every list-like (fastcore's `L`, a tuple) a list"
    if isinstance(v, dict): return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) or (hasattr(v, '__iter__') and hasattr(v, '__getitem__') and not isinstance(v, (str, bytes))):
        return [_plain(x) for x in v]
    return v

# --- names ----------------------------------------------------------------------------------------------

def _py_nm(nm: str) -> str:
    "A Python parameter name for property `nm`: `nm` itself when Python can use it unchanged, else a close spelling"
    if nm.isidentifier() and not keyword.iskeyword(nm) and nm != '__debug__' and (nm.isascii() or unicodedata.is_normalized('NFKC', nm)):
        return nm
    # Python reads identifiers in NFKC form (`ｑ` is `q`, `x²` is `x2`): a parameter is named as Python reads it
    s = ''.join(c if ('_' + c).isidentifier() else '_' for c in unicodedata.normalize('NFKC', nm)) or '_'
    if not (('_' + s).isidentifier() and unicodedata.is_normalized('NFKC', s)): s = re.sub(r'[^0-9A-Za-z_]', '_', s)
    if not s[0].isidentifier(): s = f'_{s}'
    if keyword.iskeyword(s) or s == '__debug__': s = f'{s}_'
    return s

def _nm_map(nms, where: str = 'Schema') -> dict:
    "Python name -> original property name; raises on two names that sanitize alike"
    py2orig: dict[str, str] = {}
    for orig in nms:
        if not isinstance(orig, str): raise ValueError(f"{where}: property names must be strings, got {short(orig, 60)}")
        pynm = _py_nm(orig)
        prev = py2orig.get(pynm)
        if prev is not None and prev != orig:
            raise ValueError(f'{where}: name collision after sanitizing: {prev!r} and {orig!r} -> {pynm!r}')
        py2orig[pynm] = orig
    return py2orig

# --- annotations --------------------------------------------------------------------------------------

_SCALARS = {'string': str, 'integer': int, 'number': float, 'boolean': bool, 'null': None}
_LITERAL_TYPES = (str, int, bool, _NoneType)  # what `Literal` holds; floats, arrays and objects are not literals
_TYPING_KW = frozenset(('type', '$ref', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'properties', 'items', 'prefixItems'))
_NOT_PLAIN = frozenset(('$ref', 'const', 'enum', 'anyOf', 'oneOf', 'allOf'))  # what makes a property more than its type
_PLAIN_KEYS = _NOT_PLAIN | {'title', 'nullable'}  # ... or asks for more checks on the way
_DEPTH = 32  # levels of nesting given Python types; deeper is `Any` (the check still goes all the way down)

_MISSING = object()

def _unescape(seg: str) -> str: return unquote(seg).replace('~1', '/').replace('~0', '~')

def _pointer(root, ref: str):
    "What JSON Pointer fragment `ref` ('#/$defs/A~1B/properties/x') points at in `root`, or `_MISSING`"
    node = root
    for seg in ref[2:].split('/') if ref != '#' else ():
        seg = _unescape(seg)
        if isinstance(node, dict) and seg in node: node = node[seg]
        elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node): node = node[int(seg)]
        else: return _MISSING
    return node

class _Annos:
    """The annotations of one schema: its root (for `$ref`), what it belongs to (for errors), what each `$ref` became, and
    whether a description inside a union, tuple, list or dict is kept (`schema2anno`; a built tool's signature is plain)"""
    def __init__(self, root, where: str, described: bool = False):
        self.made: dict[str, Any] = {}  # `$ref` -> the annotation it became
        self.root, self.where, self.described = root, where, described

    def bad(self, at: str, what: str) -> ValueError:
        return ValueError(f"{self.where}, at {at or 'the root'}: {what}")

    def anno(self, s, at: str, depth: int = 0):
        "Annotation for schema `s`, found at JSON Pointer `at`"
        if type(s) is dict and type(ty := s.get('type')) is str and ty in _SCALARS and _PLAIN_KEYS.isdisjoint(s) and depth <= _DEPTH:
            return _SCALARS[ty]  # most properties
        if s is True or s is False: return Any
        if not isinstance(s, dict): raise self.bad(at, f"a schema must be an object or true/false, got {short(s, 60)}")
        if 'title' in s and not isinstance(s['title'], str): raise self.bad(at, f"'title' must be a string, got {short(s['title'], 60)}")
        if depth > _DEPTH: return Any
        t = self._type(s, at, depth)
        if s.get('nullable') is True and t is not Any: t = Optional[t]  # OpenAPI's (and Gemini's) way to say null
        return t

    def part(self, s, at: str, depth: int):
        """Annotation for `s` inside a union, tuple, list or dict: `Annotated[T, 'its description']` where it has one, which
        nothing else would keep (a parameter's or field's description stays in the schema's `properties`)"""
        t = self.anno(s, at, depth)
        d = s.get('description') if self.described and type(s) is dict else None
        return Annotated[t, d] if isinstance(d, str) and d else t

    def _list(self, s: dict, k: str, at: str) -> list:
        v = s[k]
        if not isinstance(v, list): raise self.bad(f'{at}/{k}', f"must be an array, got {short(v, 60)}")
        return v

    def _type(self, s: dict, at: str, depth: int):
        if type(ty := s.get('type')) is str and ty in _SCALARS and _NOT_PLAIN.isdisjoint(s): return _SCALARS[ty]
        if '$ref' in s: return self._ref(s['$ref'], f'{at}/$ref', depth)
        if 'const' in s: return _literal([s['const']])
        if 'enum' in s: return _literal(self._list(s, 'enum', at))
        for k in ('anyOf', 'oneOf'):
            if k in s:
                return _union([self.part(x, f'{at}/{k}/{i}', depth + 1) for i, x in enumerate(self._list(s, k, at))])
        if 'allOf' in s:
            typed = [(i, x) for i, x in enumerate(self._list(s, 'allOf', at)) if isinstance(x, dict) and x.keys() & _TYPING_KW]
            if len(typed) == 1 and not (s.keys() & _TYPING_KW - {'allOf'}): return self.anno(typed[0][1], f'{at}/allOf/{typed[0][0]}', depth + 1)
            if typed: return Any  # several parts with types: what they agree on has no Python spelling
        ty = s.get('type')
        if isinstance(ty, list): return _union([self._type({**s, 'type': x}, at, depth) if isinstance(x, str) else Any for x in ty])
        if not isinstance(ty, str): return self._object(s, at, depth) if ty is None and 'properties' in s else Any
        if ty in _SCALARS: return _SCALARS[ty]
        if ty == 'array': return self._array(s, at, depth)
        if ty == 'object': return self._object(s, at, depth)
        return Any

    def _array(self, s: dict, at: str, depth: int):
        if 'prefixItems' in s:
            ts = tuple(self.part(x, f'{at}/prefixItems/{i}', depth + 1) for i, x in enumerate(self._list(s, 'prefixItems', at)))
            return tuple[ts]  # type: ignore[valid-type]  # (annotations made at run time)
        items = s.get('items')
        if isinstance(items, list):  # draft-07's tuples
            return tuple[tuple(self.anno(x, f'{at}/items/{i}', depth + 1) for i, x in enumerate(items))]  # type: ignore[misc]
        if s.get('maxItems') == 0: return tuple[()]
        item = Any if items is None else self.part(items, f'{at}/items', depth + 1)
        return set[item] if s.get('uniqueItems') is True else list[item]  # type: ignore[valid-type]  # (annotations made at run time)

    def _object(self, s: dict, at: str, depth: int, nm: str | None = None, ref: str | None = None):
        props = s.get('properties')
        if props is not None and not isinstance(props, dict): raise self.bad(f'{at}/properties', f"must be an object, got {short(props, 60)}")
        if props or (props is not None and s.get('title')): return self._typeddict(nm or s.get('title') or 'Object', s, at, depth, ref)
        add = s.get('additionalProperties')
        if isinstance(add, dict):
            names: dict = s['propertyNames'] if isinstance(s.get('propertyNames'), dict) else {}
            key = int if names.get('pattern') == r'^-?[0-9]+$' else _literal(names['enum']) if isinstance(names.get('enum'), list) else str
            return dict[key, self.part(add, f'{at}/additionalProperties', depth + 1)]  # type: ignore[valid-type, misc]
        return dict

    def _ref(self, ref, at: str, depth: int):
        if not isinstance(ref, str): raise self.bad(at, f"must be a string, got {short(ref, 60)}")
        if ref in self.made: return self.made[ref]
        if not (ref == '#' or ref.startswith('#/')): return Any  # an anchor or another document: the validator resolves those
        s = _pointer(self.root, ref)
        if s is _MISSING: raise self.bad(at, f"{ref!r} points at nothing in the schema")
        if isinstance(s, dict) and s.get('properties') and (s.get('type') in (None, 'object')):
            return self._object(s, ref[1:], depth + 1, _unescape(ref.rsplit('/', 1)[-1]) if ref != '#' else None, ref)
        self.made[ref] = Any  # a reference back to itself (through non-objects) ends here
        res = self.made[ref] = self.anno(s, ref[1:], depth + 1)
        return res

    def _typeddict(self, nm: str, s: dict, at: str, depth: int, ref: str | None):
        """A TypedDict for an object schema. One reached by `$ref` is made empty first and filled after, so it can refer
        to itself; any other is made from its fields' types, or found made already for the same fields"""
        title = s.get('title') or nm
        req = s.get('required', [])
        if not isinstance(req, list): raise self.bad(f'{at}/required', f"must be an array, got {short(req, 60)}")
        # `module.Name`: a second class named alike; else the package, as users import it (never a private module's path)
        module = nm[:-len(title) - 1] if nm != title and nm.endswith('.' + title) else 'funccall'
        td: Any = None  # (a TypedDict class made at run time, its keys set here)
        if ref is not None: td = self.made[ref] = _new_typeddict(title, {}, frozenset(), module)
        annos = {k: self.anno(ps, f'{at}/properties/{k}', depth + 1) for k, ps in s['properties'].items()}
        required = frozenset(k for k in req if isinstance(k, str) and k in annos)
        if ref is not None:
            td.__annotations__ = annos
            td.__required_keys__, td.__optional_keys__ = required, frozenset(annos.keys() - required)
            td.__total__ = not td.__optional_keys__
            if _TD_NS is not None and '__mutable_keys__' in _TD_NS: td.__mutable_keys__ = frozenset(annos)
            return td
        # (every annotation made here is hashable: classes, generics of them, `Literal` of scalars, `Annotated` with text)
        key = (nm, title, tuple(annos), tuple(annos.values()), required)  # (two tuples: a pair per field took twice the memory)
        if (td := _typeddicts.get(key)) is not None: return td
        td = _new_typeddict(title, annos, required, module)
        if len(_typeddicts) >= 256: _typeddicts.clear()  # bounded: when full it starts again
        _typeddicts[key] = td
        return td

def _new_typeddict(title: str, annos: dict, required: frozenset, module: str) -> Any:
    """`typing.TypedDict(title, ...)` with these fields, made as `typing` makes one (its metaclass, `dict` as base, the
    namespace this Python's `typing` gives one) at half the cost; through `typing` itself on a Python whose namespace
    is not one known here"""
    optional = frozenset(annos.keys() - required)
    if _TD_NS is None:
        td: Any = typing.TypedDict(title, {})  # type: ignore[misc]  # (its name is the schema's)
        td.__module__, td.__annotations__, td.__required_keys__, td.__optional_keys__, td.__total__ = module, annos, required, optional, not optional
        return td
    ns = {**_TD_NS, '__module__': module, '__annotations__': annos, '__required_keys__': required, '__optional_keys__': optional,
          '__total__': not optional}
    if '__mutable_keys__' in ns: ns['__mutable_keys__'] = frozenset(annos)  # (3.13: none is ReadOnly)
    return type.__new__(_TD_META, title, (dict,), ns)

def _typeddict_namespace():
    "The namespace `typing` gives an empty TypedDict, when it holds only names known here (3.14 makes annotations lazily)"
    ns = {k: v for k, v in vars(typing.TypedDict('_', {})).items() if k not in ('__dict__', '__weakref__')}  # type: ignore[operator]
    known = {'__module__', '__doc__', '__annotations__', '__required_keys__', '__optional_keys__', '__total__', '__orig_bases__',
             '__readonly_keys__', '__mutable_keys__'}
    return ns if ns.keys() <= known and ns.get('__orig_bases__', ()) == () else None

_TD_META, _TD_NS = type(typing.TypedDict('_', {})), _typeddict_namespace()  # type: ignore[operator]

# Making a class costs tens of microseconds, finding one doesn't: a TypedDict is kept for the fields it was made of
# (their names, types and which are required), and given to the next object schema with the same ones
_typeddicts: dict = {}

def _literal(vs: list):
    "`Literal[...]` of an enum's values; `Any` when one is not a literal (a float, array or object)"
    if not vs or not all(type(v) in _LITERAL_TYPES for v in vs): return Any
    return Literal[tuple(vs)]

def _union(members: list):
    "A union of `members` in their order (`anyOf` order is meaning: the first that fits wins)"
    if not members or Any in members: return Any
    return members[0] if len(members) == 1 else Union[tuple(members)]

def schema2anno(
    s: JsonDict,      # a JSON Schema fragment
    defs: JsonDict|None=None,  # the root `$defs`, used to resolve `$ref`
) -> Any:             # str, list[int], Literal[...], a union, a TypedDict, `Annotated[T, 'desc']` inside a container; Any for what has no Python type
    "Annotation for schema `s`; the inverse of `handle_type` (constraints, and the descriptions of properties, stay in the schema)"
    root = {'$defs': defs, 'definitions': defs} if defs is not None else s
    return _Annos(root, 'Schema', described=True).anno(s, '')

# --- parameters and signatures ------------------------------------------------------------------------

def mk_param(
    orig: str,        # the property's name in the schema
    props: JsonDict,  # the property's schema
    req: Collection[str],  # the names of the required properties
    pynm: str|None=None,   # the Python name to give it (default: `orig`)
    defs: JsonDict|None=None,  # the root `$defs`, used to resolve `$ref`
) -> Parameter:
    "Create a `Parameter` for `orig` with schema `props`"
    root = {'$defs': defs, 'definitions': defs} if defs is not None else {}
    p = _param(orig, props, orig in req, pynm, _Annos(root, f'Property {orig!r}'), '')
    return Parameter(p.name, p.kind, default=p.default, annotation=p.annotation)  # (with `Parameter`'s checks: `pynm` is the caller's)

def _param(orig: str, ps, required: bool, pynm: str | None, annos: _Annos, at: str) -> Parameter:
    return _trusted_parameter(pynm or orig, *_kind_default(ps, required), annos.anno(ps, at))

def _kind_default(ps, required: bool) -> tuple[Any, Any]:
    "A parameter's kind and default: a required one is positional, an optional one keyword-only, its default the schema's"
    if required: return Parameter.POSITIONAL_OR_KEYWORD, empty
    return Parameter.KEYWORD_ONLY, ps.get('default') if isinstance(ps, dict) else None

def _trusted_parameter(nm: str, kind: Any, default: Any, anno: Any) -> Parameter:
    "`Parameter(nm, kind, ...)` without its checks, a third of its cost (less than caching one): names here are sanitized already"
    p: Any = object.__new__(Parameter)
    p._name, p._kind, p._default, p._annotation = nm, kind, default, anno
    return p

class _Parts(typing.NamedTuple):
    "What a tool's schema gives a signature: its parameters, required first, with their property names, schemas and annotations"
    pynms: tuple   # the parameters' names, in the signature's order
    origs: tuple   # the property names they stand for (`pynms` itself when every name is unchanged)
    schemas: tuple # the properties' schemas
    annos: tuple   # the parameters' annotations
    nreq: int      # how many come first as required
    name: str
    desc: str
    schema: dict

    @property
    def sig(self) -> Signature:
        "The tool's signature, its parameters made when first read (see `_Signature`)"
        sig: Any = object.__new__(_Signature)
        sig._parts, sig._return_annotation = self, Signature.empty
        return sig

class _Signature(Signature):
    """A built tool's `Signature`, whose parameters are made when something first reads them: most built tools are
    called, never inspected, and a `Parameter` each (in a mapping of their own) was a third of what a tool kept.
    Made only by `_Parts.sig`; `replace()` and unpickling give one with its parameters made, as `Signature` does."""
    __slots__ = ('_parts',)

    def __getattr__(self, nm: str):  # (only for a slot not set: `_parameters` before its first reading)
        if nm != '_parameters': raise AttributeError(nm)
        p = self._parts
        # names are unique and sanitized, and required ones come first: nothing left for `Signature` to validate
        ps = (_trusted_parameter(py, *_kind_default(s, i < p.nreq), t) for i, (py, s, t) in enumerate(zip(p.pynms, p.schemas, p.annos)))
        self._parameters = types.MappingProxyType({q.name: q for q in ps})  # (a plain dict: an `OrderedDict` takes twice the memory)
        return self._parameters

    def __repr__(self) -> str: return f'<Signature {self}>'  # (as `Signature` shows itself: a lazy one is no other kind of thing)

def _parts(tool) -> _Parts:
    nm, desc, s = tool_parts(tool)
    where = f"Tool {nm!r}"
    props, req = s.get('properties', {}), s.get('required', [])
    if not isinstance(props, dict): raise ValueError(f"{where}, at /properties: must be an object, got {short(props, 60)}")
    if not isinstance(req, list) or not all(isinstance(k, str) for k in req):
        raise ValueError(f"{where}, at /required: must be an array of property names, got {short(req, 60)}")
    # a required name the properties don't declare is still an argument the tool needs: a parameter of any value
    undeclared = [k for k in dict.fromkeys(req) if k not in props]
    py2orig, req, annos = _nm_map([*props, *undeclared] if undeclared else props, where), set(req), _Annos(s, where)
    pynms, origs = [py for py, orig in py2orig.items() if orig in req], [orig for orig in py2orig.values() if orig in req]
    nreq = len(pynms)
    for py, orig in py2orig.items():  # required first, each group in the schema's order
        if orig not in req: pynms.append(py); origs.append(orig)
    pys = tuple(pynms)
    ors = pys if pys == (ors := tuple(origs)) else ors  # (kept per tool: one tuple when no name changed)
    schemas = tuple(props.get(orig, True) for orig in ors)
    ts = tuple(annos.anno(ps, f'/properties/{orig}') for orig, ps in zip(ors, schemas))
    return _Parts(pys, ors, schemas, ts, nreq, nm, desc, s)

def schema2sig(
    tool: Any,  # a tool in any format `tool_parts` takes
) -> Signature:
    "Convert json schema `tool` to a `Signature`"
    return _parts(tool).sig

# --- quick tests: the arguments a call may send without running the validator ----------------------------

# every keyword that asserts something in some draft; a schema without them accepts any JSON value
_ASSERTING = frozenset((
    'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength',
    'pattern', 'items', 'prefixItems', 'additionalItems', 'unevaluatedItems', 'contains', 'maxContains', 'minContains', 'maxItems',
    'minItems', 'uniqueItems', 'properties', 'patternProperties', 'additionalProperties', 'unevaluatedProperties', 'propertyNames',
    'maxProperties', 'minProperties', 'required', 'dependentRequired', 'dependentSchemas', 'dependencies', 'allOf', 'anyOf', 'oneOf',
    'not', 'if', 'then', 'else', '$ref', '$dynamicRef', '$recursiveRef', 'disallow', 'extends', 'divisibleBy',
    '$schema', '$id', 'id', '$anchor', '$dynamicAnchor', '$recursiveAnchor'))  # (these last change how refs or drafts read)
_JSON_TYPES = {'string': (str,), 'integer': (int,), 'number': (int, float), 'boolean': (bool,), 'null': (_NoneType,),
               'array': (list,), 'object': (dict,)}
_SCALAR_TYPES = frozenset((str, int, float, bool, _NoneType))
_NOTHING: frozenset[type] = frozenset()
_QUICK_DEPTH = 12  # nesting given a quick test (a `$ref` followed is a level); deeper values take the validator

def _never(v) -> bool: return False

def _count(v) -> bool: return type(v) is int and v >= 0
def _bound(v) -> bool: return type(v) in (int, float) and v == v  # not bool, not NaN

def _quick(s, depth: int = 0, root=None):
    """A test that is True only for a plain JSON value `s` certainly accepts, and the Python types it may accept; None
    when no quick test is certain (the validator decides). False from the test means 'ask the validator'. `root`: the
    schema `s` is part of, whose `$defs` a `$ref` names (None: a `$ref` has no quick test)"""
    if s is True: return is_json, None
    if not isinstance(s, dict) or depth > _QUICK_DEPTH: return None
    ks = s.keys() & _ASSERTING
    if not ks: return is_json, None
    ty = s.get('type')
    if isinstance(ty, list) and ks == {'type'} and ty and all(isinstance(t, str) and t in _JSON_TYPES for t in ty):
        ts = frozenset(x for t in ty for x in _JSON_TYPES[t])
        if ts <= _SCALAR_TYPES: return (lambda v: type(v) in ts), ts
        return (lambda v: type(v) in ts and is_json(v)), ts
    if ty is None: return _quick_any(s, ks, depth, root)
    rest = ks - {'type'} - _any_names(s)
    if ty == 'string' and rest <= {'enum', 'const', 'minLength', 'maxLength', 'pattern'}: return _quick_string(s)
    if ty in ('integer', 'number') and rest <= {'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'}: return _quick_number(s, ty)
    if ty in ('integer', 'number') and rest == {'const'} and type(c := s['const']) in (int, float):
        ts = frozenset(_JSON_TYPES[ty])
        return (lambda v: type(v) in ts and v == c), ts
    if ty in ('boolean', 'null') and not rest: return _quick_type(_JSON_TYPES[ty][0])
    if ty == 'boolean' and rest == {'const'} and type(c := s['const']) is bool: return (lambda v: v is c), frozenset((bool,))
    if ty == 'array' and rest <= {'items', 'minItems', 'maxItems'}: return _quick_array(s, depth, root)
    if ty == 'object' and rest <= {'properties', 'required', 'additionalProperties'}: return _quick_object(s, depth, root)
    return None

_NAMES = frozenset(('propertyNames',))

def _any_names(s: dict) -> frozenset:
    "`{'propertyNames'}` when `s` says no more of an object's keys than that they are strings (every JSON key is), else empty"
    ns = s.get('propertyNames', _MISSING)
    if ns is _MISSING: return _NOTHING
    if ns is True or isinstance(ns, dict) and (ns.keys() & _ASSERTING <= {'type'}) and ns.get('type', 'string') == 'string': return _NAMES
    return _NOTHING

def _local_def(root, ref) -> dict | bool | None:
    """The schema `$ref` points at in `root` ('#/$defs/Item', '#/properties/a/items'), else None: also when the way there
    passes an `$id` (or draft 4's `id`), which may make `#` another document (where a property is named 'id' too: rare)"""
    if type(ref) is not str or not ref.startswith('#/'): return None
    node = root
    for seg in ref[2:].split('/'):
        if isinstance(node, list) and seg.isdigit() and int(seg) < len(node): node = node[int(seg)]; continue
        if not isinstance(node, dict) or (node is not root and ('$id' in node or 'id' in node)): return None
        if (node := node.get(_unescape(seg), _MISSING)) is _MISSING: return None
    return node if isinstance(node, (dict, bool)) and not (isinstance(node, dict) and ('$id' in node or 'id' in node)) else None

def _quick_any(s: dict, ks, depth: int, root=None):
    if ks == {'$ref'} and root is not None and (t := _local_def(root, s['$ref'])) is not None:
        if depth < _EAGER_REFS: return _quick(t, depth + 1, root)
        return _later_ref(t, root), _ANY_JSON
    if ks == {'enum'} and isinstance(s['enum'], list) and s['enum'] and all(type(x) is str for x in s['enum']):
        return _one_of_strings(frozenset(s['enum']))
    if ks == {'const'} and type(c := s['const']) is str: return (lambda v: type(v) is str and v == c), frozenset((str,))
    for k in ('anyOf', 'oneOf'):
        if ks == {k} and isinstance(s[k], list) and s[k]:
            subs = [_quick(x, depth + 1, root) for x in s[k]]
            domains = [q[1] for q in subs if q is not None]
            if None in subs or None in domains:  # (None in domains: a branch that takes anything, a union of it says nothing quick)
                return _one_of_sure(s[k], subs, root) if k == 'oneOf' else None
            # oneOf is anyOf when no value can match two branches: their Python types don't overlap
            # or when each branch gives one key a string of its own (a discriminator: `{"type": {"const": "page"}}`, required)
            if k == 'oneOf' and sum(map(len, domains)) != len(frozenset().union(*domains)) and not _tagged(s[k], root):
                return _one_of_sure(s[k], subs, root)
            return _any_of(tuple(t for t, _ in subs)), frozenset().union(*domains)
    return None

_EAGER_REFS = 2  # a `$ref` this deep or deeper gets its test when a value first reaches it (a recursive schema: as deep as values go)

def _later_ref(t, root):
    "The quick test of `$ref` target `t`, made when first run (False, for the validator to decide, when it has none)"
    made: list[Callable[[Any], bool]] = []
    def test(v) -> bool:
        if not made: made.append(q[0] if (q := _quick(t, 0, root)) is not None else _never)
        try: return made[0](v)
        except RecursionError: return False  # (refs that only name each other, or a value nested past the stack)
    return test

def _tagged(branches: list, root) -> bool:
    "Whether no object can match two of `branches`: each requires one key to be its own string (`const`, or a one-string `enum`)"
    tags = []  # per branch: key -> its string
    for b in branches:
        if isinstance(b, dict) and b.keys() & _ASSERTING == {'$ref'} and root is not None: b = _local_def(root, b['$ref'])
        if not isinstance(b, dict) or not isinstance(props := b.get('properties'), dict) or not isinstance(req := b.get('required'), list):
            return False
        if '$ref' in b: return False  # (draft 7 reads a `$ref` alone, its siblings ignored)
        tags.append({k: c for k in req if type(k) is str and isinstance(ps := props.get(k), dict) and (c := _one_string(ps)) is not None})
    keys = set(tags[0]).intersection(*tags[1:])
    return any(len({t[k] for t in tags}) == len(tags) for k in keys)

def _one_string(s: dict) -> str | None:
    "The one string `s` allows, when it says so with `const` or a one-item `enum` (any other keyword only narrows it)"
    if '$ref' in s: return None  # (draft 7 reads a `$ref` alone, its siblings ignored)
    if type(c := s.get('const')) is str: return c
    if isinstance(e := s.get('enum'), list) and len(e) == 1 and type(e[0]) is str: return e[0]
    return None

# the Python types that may pass a `type`, for a test that a value surely fails it (1.0 is an integer)
_MAY_PASS = {'string': (str,), 'integer': (int, float), 'number': (int, float), 'boolean': (bool,), 'null': (_NoneType,),
             'array': (list,), 'object': (dict,)}

def _one_of_sure(branches: list, subs: list, root):
    """A oneOf's quick test when its branches may overlap: one branch's quick test passes the value, and every other
    branch surely refuses it (see `_refuses`); anything else asks the validator. None when no branch has a quick test"""
    if all(q is None for q in subs): return None
    tests, refuses = tuple(q[0] if q is not None else None for q in subs), tuple(_refuses(b, root) for b in branches)
    def test(v) -> bool:
        hit = False
        for t, r in zip(tests, refuses):
            if r(v): continue
            if t is None or hit or not t(v): return False
            hit = True
        return hit
    return test, frozenset().union(*(q[1] or _ANY_JSON for q in subs if q is not None))

def _refuses(b, root):
    """A test that is True only for a value branch `b` surely refuses: of a type it doesn't take, or an object without a
    key it requires, or with a string other than the one it requires there (`const`); `_never` when it says none of these"""
    if b is False: return lambda v: True
    if isinstance(b, dict) and '$ref' in b:  # (the target applies in every draft; its siblings not in draft 7's)
        b = _local_def(root, b['$ref']) if root is not None else None
        if isinstance(b, dict) and '$ref' in b: b = None
    if not isinstance(b, dict): return _never
    ty, req, props = b.get('type'), b.get('required'), b.get('properties')
    names = [ty] if type(ty) is str else ty if isinstance(ty, list) and all(type(t) is str for t in ty) else None
    ts = frozenset(x for t in names for x in _MAY_PASS.get(t, (object,))) if names else None
    if ts is not None and object in ts: ts = None  # (a type name no draft knows: nothing sure)
    req = tuple(k for k in req if type(k) is str) if isinstance(req, list) else ()
    tags = {k: c for k, ps in props.items() if isinstance(ps, dict) and (c := _one_string(ps)) is not None} if isinstance(props, dict) else {}
    if ts is None and not req and not tags: return _never
    def refuses(v) -> bool:
        if ts is not None and type(v) not in ts: return True
        if type(v) is not dict: return False
        return any(k not in v for k in req) or any(type(x := v.get(k)) is str and x != c for k, c in tags.items())
    return refuses

def _any_of(tests: tuple):
    if len(tests) == 2:
        a, b = tests
        return lambda v: a(v) or b(v)
    return lambda v: any(t(v) for t in tests)

def _string_rule(s: dict):
    """A string schema's length bounds, allowed values (a frozenset, or None for any) and pattern (its compiled `search`,
    or None), or None when it says more than these"""
    lo, hi, find = s.get('minLength', 0), s.get('maxLength'), None
    if not _count(lo) or (hi is not None and not _count(hi)): return None
    if 'pattern' in s:
        if (plain := _plain_pattern(s['pattern'])) is None: return None
        find, longest = plain
        hi = longest if hi is None else min(hi, longest)  # (longer: the validator, with its own limits)
    vs = s['enum'] if 'enum' in s else [s['const']] if 'const' in s else None
    if vs is not None:
        if not isinstance(vs, list) or not all(type(x) is str for x in vs) or 'enum' in s and 'const' in s: return None
        vs = frozenset(x for x in vs if lo <= len(x) and (hi is None or len(x) <= hi) and (find is None or find(x)))
    return lo, hi, vs, find

# A pattern the quick tests run themselves: `^`, then literals, escaped punctuation, `\d`, `\w` and classes of literals
# and ranges (none negated), each maybe repeated (`*`, `+`, `?`, `{n}`, `{n,m}`), then `$` maybe. These mean the same in
# ECMA 262 and Python's `re` once `$` is `\Z` and `\d`, `\w` are ASCII, and after `^` a search is linear with one
# unbounded repeat, quadratic with two: `^#[0-9A-Fa-f]{6}$`, `^[A-Za-z0-9_]+$`, `^\d+:\d+$`. Anything else, or a string
# longer than `_PATTERN_LONGEST` allows for its repeats: the validator
# (no escaped backslash: a `\` is always an escape, so a repeat's `*`, `+` is one not after a `\`)
_PLAIN_ATOM = r'(?:[A-Za-z0-9 _#@:/,=!%&\'"<>~`;-]|\\[dw.\-_/+*?()\[\]{}^$| #@:,=!%&\'"<>~`;]|\[(?:[A-Za-z0-9 _.#@:/,=]|\\[dw.\-_/]|-(?!-))+\])'
_PLAIN_PATTERN = rf'\^(?:{_PLAIN_ATOM}(?:[*+?]|\{{[0-9]{{1,4}}(?:,[0-9]{{0,4}})?\}})?)*\$?'  # (compiled by `re` on first use)
_PATTERN_LONGEST = {0: 1000, 1: 1000, 2: 200}  # the longest string a quick test searches, by the pattern's unbounded repeats

def _plain_pattern(p) -> tuple | None:
    "`search` of pattern `p` and the longest string to search, when `p` is plain (see `_PLAIN_PATTERN`); else None"
    if type(p) is not str or not re.fullmatch(_PLAIN_PATTERN, p): return None
    if (longest := _PATTERN_LONGEST.get(len(re.findall(r'(?<!\\)(?:[*+]|\{[0-9]+,\})', p)))) is None: return None
    py = p[:-1] + r'\Z' if p.endswith('$') and not p.endswith('\\$') else p
    if (bound := re_longest(py, re.ASCII)) is not None: longest = min(longest, bound)  # `^a?a?a?...`: its ways multiply
    if longest < 0: return None
    try: return re.compile(py, re.ASCII).search, longest
    except re.error: return None

def _quick_string(s: dict):
    if (rule := _string_rule(s)) is None: return None
    lo, hi, vs, find = rule
    if vs is not None: return _one_of_strings(vs)
    if find is not None:  # (then `hi` is a number: the pattern's longest match at most)
        return (lambda v: type(v) is str and lo <= len(v) <= hi and find(v) is not None), frozenset((str,))  # pyright: ignore[reportOperatorIssue]
    if hi is None and not lo: return (lambda v: type(v) is str), frozenset((str,))
    if hi is None: return (lambda v: type(v) is str and len(v) >= lo), frozenset((str,))
    return (lambda v: type(v) is str and lo <= len(v) <= hi), frozenset((str,))

_STR = frozenset((str,))
_string_sets: dict = {}

def _one_of_strings(vs: frozenset) -> tuple:
    "The quick test of a string among `vs`, and its type; one per set of strings, shared by every schema that lists them"
    if (q := _string_sets.get(vs)) is None:
        q = (lambda v: type(v) is str and v in vs), _STR
        if len(_string_sets) < 4096: _string_sets[vs] = q  # (when full, a new set's test is its schema's own)
    return q

def _quick_number(s: dict, ty: str):
    lo, hi, xlo, xhi = (s.get(k) for k in ('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'))
    if not all(b is None or _bound(b) for b in (lo, hi, xlo, xhi)): return None  # (draft 4's boolean exclusive bounds too)
    ts = frozenset(_JSON_TYPES[ty])
    if hi is None and xlo is None and xhi is None:  # the common case: a lower bound (a count, a page)
        if lo is None: return (lambda v: type(v) in ts and v == v), ts
        return (lambda v: type(v) in ts and v >= lo), ts  # (NaN is never >= anything)
    def test(v) -> bool:
        return (type(v) in ts and v == v and (lo is None or v >= lo) and (hi is None or v <= hi) and (xlo is None or v > xlo)
                and (xhi is None or v < xhi))
    return test, ts

def _quick_type(t: type):
    return (lambda v: type(v) is t), frozenset((t,))

def _scalar_type_only(s) -> frozenset | None:
    "The Python types of `s` when all it says is a type of JSON scalars ('integer', ['string', 'null'])"
    if not isinstance(s, dict) or s.keys() & _ASSERTING != {'type'}: return None
    ty = s['type']
    key = ty if type(ty) is str else tuple(ty) if isinstance(ty, list) and all(type(t) is str for t in ty) else None
    if (ts := _type_sets.get(key)) is not None: return ts or None
    ts = frozenset(x for t in (ty if isinstance(ty, list) else [ty]) if isinstance(t, str) for x in _JSON_TYPES.get(t, (object,)))
    ts = ts if ts and ts <= _SCALAR_TYPES else _NOTHING
    if key is not None and len(_type_sets) < 256: _type_sets[key] = ts  # one set per spelling, shared by every tool
    return ts or None

_type_sets: dict = {}  # a `type` keyword's value -> its scalar Python types (empty: not only scalars)

def _quick_array(s: dict, depth: int, root=None):
    lo, hi = s.get('minItems', 0), s.get('maxItems')
    if not _count(lo) or (hi is not None and not _count(hi)): return None
    items = s.get('items', True)
    if (ts := _scalar_type_only(items)) is not None:
        def ok(v) -> bool:  # items of plain types: a type test each, no call
            if type(v) is not list: return False
            for x in v:
                if type(x) not in ts: return False
            return True
    elif (q := _quick(items, depth + 1, root)) is not None:
        item = q[0]
        def ok(v) -> bool: return type(v) is list and all(map(item, v))
    else: return None
    if not lo and hi is None: return ok, frozenset((list,))
    return (lambda v: ok(v) and lo <= len(v) and (hi is None or len(v) <= hi)), frozenset((list,))

def _quick_object(s: dict, depth: int, root=None):
    props, req, add = s.get('properties', {}), s.get('required', []), s.get('additionalProperties', True)
    if not isinstance(props, dict) or not isinstance(req, list) or not all(type(k) is str for k in req): return None
    tests, plain = {}, {}  # plain: properties that need only their type, tested without a call
    for k, ps in props.items():
        if (ts := _scalar_type_only(ps)) is not None: plain[k] = ts; continue
        if (q := _quick(ps, depth + 1, root)) is None: return None
        tests[k] = q[0]
    if add is False: other = _never
    elif (q := _quick(add, depth + 1, root)) is None: return None
    else: other = q[0]
    ptypes, get, req = plain.get, tests.get, tuple(req)
    def test(v) -> bool:
        if type(v) is not dict: return False
        for k in req:
            if k not in v: return False
        for k, x in v.items():
            if (ts := ptypes(k)) is not None:
                if type(x) not in ts: return False
            elif type(k) is not str or not get(k, other)(x): return False
        return True
    return test, frozenset((dict,))

def _exact(s) -> frozenset:
    "The Python types that need no test at all under `s` (all it says is their type); the rest go through its test"
    if s is True or not isinstance(s, dict) or not (s.keys() & _ASSERTING): return _SCALAR_TYPES
    return _scalar_type_only(s) or _NOTHING

_ROOT_QUICK = frozenset(('type', 'properties', 'required', 'additionalProperties', '$schema', '$id'))
_ROOT_ASSERTING = _ASSERTING - _ROOT_QUICK

def _root_is_quick(s: dict) -> bool:
    "Whether the root says no more than its properties (and which are required): then each argument can be tested alone"
    ty = s.get('type', 'object')
    return _ROOT_ASSERTING.isdisjoint(s) and (ty == 'object' or isinstance(ty, list) and 'object' in ty)

_ANY_JSON = frozenset((str, int, float, bool, _NoneType, list, dict))  # the types a JSON value has in Python

def _arg_test(s, root=None) -> tuple[frozenset, Callable | None]:
    """How an argument is tested quickly against its schema `s`: the Python types it may have, and a test for a value of
    one of them (None: the type is all there is to test), made of closures: nothing is compiled per argument"""
    if s is True or isinstance(s, dict) and not (s.keys() & _ASSERTING): return _ANY_JSON, is_json
    if (ts := _exact(s)): return ts, None
    ks = s.keys() & _ASSERTING if isinstance(s, dict) else None
    if ks and ks <= {'type', 'enum'} and s.get('type', 'string') == 'string' and isinstance(vs := s.get('enum'), list) and vs \
            and all(type(x) is str for x in vs):
        return frozenset((str,)), frozenset(vs).__contains__  # a string enum: a set lookup, in C
    if (q := _quick(s, 0, root)) is None: return _NOTHING, None  # no quick test: the validator decides
    return q[1] or _ANY_JSON, q[0]

_INLINE_PROPS = 8  # an object with more properties than this is tested by its quick test's function, not inline

class _Inline:
    """The source of one tool's checked code: each argument's quick test written out as statements (a type test, a
    set membership, a loop over an array's items, key tests on an object), so a call runs no function of ours at all.
    The text holds only names made here (`a0`, `x1`, `_c2`, `_K3`): every constant is a global `_cN` of the tool's
    own, and a property's name is the placeholder `_K{i}` until the compiled code is given the names (`_with_names`),
    so nothing from the schema is ever written into the source."""
    def __init__(self, g: dict):
        self.lines: list[str] = []
        self.g, self.nconst, self.nvar = g, 0, 0
        self.fail = 'raise _F'  # one short exit, caught once: the checked way's call is written out once per tool, not per test

    def const(self, v) -> str:
        nm = f'_c{self.nconst}'
        self.nconst += 1
        self.g[nm] = v
        return nm

    def single(self, at: int = 0) -> str | None:
        "The condition of the lines from `at`, when they are one `if` that leaves the quick way"
        lines = self.lines[at:]
        if len(lines) == 2 and lines[0].lstrip().startswith('if ') and lines[1].strip() == self.fail: return lines[0].strip()[3:-1]
        return None

    def add(self, ind: int, cond: str): self.lines += [f"{' ' * ind}if {cond}:", f"{' ' * (ind + 4)}{self.fail}"]

    def arg(self, s, v: str, ind: int, alone=None):
        "Statements that leave the quick way unless `v` certainly passes `s` (`alone`: the validator's check of it, if it has no quick test)"
        mark = self.lines[:], self.nconst
        if self.emit(s, v, ind, 0): return
        self.lines, self.nconst = mark
        q = _quick(s) or ((alone, None) if alone is not None else None)
        if q is None: self.lines.append(f"{' ' * ind}{self.fail}")  # no quick test: the validator decides
        else: self.add(ind, f'not {self.const(q[0])}({v})')

    def emit(self, s, v: str, ind: int, depth: int) -> bool:
        if s is True or isinstance(s, dict) and not (s.keys() & _ASSERTING):
            self.add(ind, f'_type({v}) not in _SC and not _is_json({v})'); return True
        if not isinstance(s, dict) or depth > _QUICK_DEPTH: return False
        if (ts := _exact(s)): return self.types(ts, v, ind)
        ty, rest = s.get('type'), s.keys() & _ASSERTING - {'type'} - _any_names(s)
        if isinstance(ty, list) and not rest and ty and all(isinstance(t, str) and t in _JSON_TYPES for t in ty):
            self.add(ind, f'_type({v}) not in {self.const(frozenset(x for t in ty for x in _JSON_TYPES[t]))} or not _is_json({v})'); return True
        if ty is None:
            if rest == {'enum'} and isinstance(s['enum'], list) and s['enum'] and all(type(x) is str for x in s['enum']):
                self.add(ind, f'_type({v}) is not _str or {v} not in {self.const(frozenset(s["enum"]))}'); return True
            return False
        if ty == 'string' and rest <= {'enum', 'const', 'minLength', 'maxLength', 'pattern'}: return self.string(s, v, ind)
        if ty in ('integer', 'number') and rest <= {'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'}: return self.number(s, ty, v, ind)
        if ty == 'array' and rest <= {'items', 'minItems', 'maxItems'}: return self.array(s, v, ind, depth)
        if ty == 'object' and rest <= {'properties', 'required', 'additionalProperties'}: return self.object(s, v, ind, depth)
        return False

    def types(self, ts: frozenset, v: str, ind: int) -> bool:
        if len(ts) == 1: self.add(ind, f'_type({v}) is not {self.const(next(iter(ts)))}')
        else: self.add(ind, f'_type({v}) not in {self.const(ts)}')
        return True

    def string(self, s: dict, v: str, ind: int) -> bool:
        if (rule := _string_rule(s)) is None: return False
        lo, hi, vs, find = rule
        if vs is not None: self.add(ind, f'_type({v}) is not _str or {v} not in {self.const(vs)}'); return True
        self.add(ind, ' or '.join([f'_type({v}) is not _str', *([f'_len({v}) < {self.const(lo)}'] if lo else []),
                                   *([f'_len({v}) > {self.const(hi)}'] if hi is not None else []),
                                   *([f'{self.const(find)}({v}) is None'] if find is not None else [])]))
        return True

    def number(self, s: dict, ty: str, v: str, ind: int) -> bool:
        bounds = [(s.get(k), op) for k, op in (('minimum', '<'), ('maximum', '>'), ('exclusiveMinimum', '<='), ('exclusiveMaximum', '>='))]
        if not all(b is None or _bound(b) for b, _ in bounds): return False  # (draft 4's boolean exclusive bounds too)
        test = f'_type({v}) is not _int' if ty == 'integer' else f'_type({v}) not in {self.const(frozenset(_JSON_TYPES[ty]))} or {v} != {v}'
        self.add(ind, ' or '.join([test, *(f'{v} {op} {self.const(b)}' for b, op in bounds if b is not None)]))
        return True

    def var(self, stem: str) -> str:
        self.nvar += 1
        return f'{stem}{self.nvar}'

    def array(self, s: dict, v: str, ind: int, depth: int) -> bool:
        lo, hi = s.get('minItems', 0), s.get('maxItems')
        if not _count(lo) or (hi is not None and not _count(hi)): return False
        self.add(ind, ' or '.join([f'_type({v}) is not _list', *([f'_len({v}) < {self.const(lo)}'] if lo else []),
                                   *([f'_len({v}) > {self.const(hi)}'] if hi is not None else [])]))
        x = self.var('x')
        self.lines.append(f"{' ' * ind}for {x} in {v}:")
        return self.emit(s.get('items', True), x, ind + 4, depth + 1)

    def object(self, s: dict, v: str, ind: int, depth: int) -> bool:
        props, req, add = s.get('properties', {}), s.get('required', []), s.get('additionalProperties', True)
        if not isinstance(props, dict) or len(props) > _INLINE_PROPS: return False
        if not isinstance(req, list) or not all(type(k) is str for k in req): return False
        reqs = list(dict.fromkeys(req))
        self.add(ind, ' or '.join([f'_type({v}) is not _dict', *(f'{self.const(k)} not in {v}' for k in reqs)]))
        if reqs and all(k in props for k in reqs):  # the usual call gives just the required keys: test each, no loop
            self.lines.append(f"{' ' * ind}if _len({v}) == {self.const(len(reqs))}:")
            for k in reqs:
                if not self.emit(props[k], f'{v}[{self.const(k)}]', ind + 4, depth + 1): return False
            self.lines.append(f"{' ' * ind}else:")
            ind += 4
        k, x = self.var('k'), self.var('x')
        self.lines += [f"{' ' * ind}for {k}, {x} in {v}.items():"]
        self.add(ind + 4, f'_type({k}) is not _str')
        for i, (nm, ps) in enumerate(props.items()):
            self.lines.append(f"{' ' * (ind + 4)}{'el' if i else ''}if {k} == {self.const(nm)}:")
            if not self.emit(ps, x, ind + 8, depth + 1): return False
        if props: self.lines.append(f"{' ' * (ind + 4)}else:")
        if add is False: self.lines.append(f"{' ' * (ind + 8 if props else ind + 4)}{self.fail}"); return True
        at = len(self.lines)
        if not self.emit(add, x, ind + 8 if props else ind + 4, depth + 1): return False
        if not props and (cond := self.single(at)) is not None:  # (a free-form object: the key's test and the value's in one)
            self.lines[at - 2:] = [f"{' ' * (ind + 4)}if _type({k}) is not _str or {cond}:", f"{' ' * (ind + 8)}{self.fail}"]
        return True

_NAMED_MAX = 3  # a tool with at most this many optional arguments has a parameter for each; one with more, `**extra` when its first calls gave none

def _inline_code(schemas: Sequence[Any], nreq: int, g: dict, is_async: bool, alone: dict, named: bool = True,
                 given: tuple | None = None) -> tuple[types.CodeType, str]:
    """The code of a tool whose arguments are tested inline against their schemas (see `_Inline`); its constants go into
    `g`, and its property names are the placeholders `_K0`... (see `_with_names`). `...` in it stands for `_UNSET`,
    "not given": the compiled code holds `_UNSET` in its place, a constant, which costs less to load than a global.

    A call names its optional arguments or leaves them out. `named`: a parameter for each, which a call that leaves it
    out pays a default and a test for. Else the required arguments and `**extra`, which holds the optional ones given: a
    call of the required ones alone then costs one test of `extra`, however many optional ones there are, and one that
    gives some goes on to the code made for just those keys (`given`: their positions, in the parameters' order; see
    `_Keyed`), which tests them and sends every argument on; each key given costs more than a parameter would.
    Returns the code and its source (the tool names it: see `_named_code`)."""
    n, aw = len(schemas), 'await ' if is_async else ''
    named = named and given is None
    src, tested = _Inline(g), [*range(nreq if given is None else 0), *(range(nreq, n) if named else given or ())]
    # one test per argument: those that take a single condition share one `if`, the others are statements, an optional
    # one's after its `is not ...`
    conds, body = [], []
    for i in tested:
        src.lines = []
        src.arg(schemas[i], f'a{i}', 8 if i < nreq or not named else 12, alone.get(i))
        guard = i >= nreq and named
        if (cond := src.single()) is not None: conds.append(f'a{i} is not ... and ({cond})' if guard else f'({cond})')
        else: body += [f'        if a{i} is not ...:', *src.lines] if guard else src.lines
    # every call passes its arguments on as keywords: no dict of ours to build, a third of the tool's cost. Every test
    # inside one `try`, each leaving by `raise _F` to the one call of the checked way (the text, and so its compiling,
    # stays proportional to the tests, not to tests x parameters), made after the `except` block: a refusal or the
    # tool's own error raised inside it would carry `_F` as its context into the user's traceback
    req, kws = ''.join(f', a{i}' for i in range(nreq)), lambda idx: ''.join(f', _K{i}=a{i}' for i in idx)
    if given is not None: params = f'{req[2:]}{", " if nreq else ""}extra'
    else: params = ''.join(f'a{i}=..., ' for i in range(n if named else nreq)) + '**extra'
    src.lines = [f"{'async def' if is_async else 'def'} tool({params}):",
                 *(f"    a{i} = extra['_P{i}']" for i in (given or ())),
                 '    try:', *(['        if extra: raise _F'] if named else []),
                 f"        if {' or '.join(conds) or 'False'}: raise _F", *body, '    except _F:', '        pass', '    else:']
    if named and n - nreq <= _NAMED_MAX:  # which optional arguments are given: a test of each, the call that sends just those at each leaf
        def sent(opt: list, gave: list, ind: str) -> list:
            if not opt: return [f"{ind}return {aw}_disp(_name{kws([*range(nreq), *gave])})"]
            return [f"{ind}if a{opt[0]} is ...:", *sent(opt[1:], gave, ind + '    '), *sent(opt[1:], [*gave, opt[0]], ind)]
        src.lines += [*sent(list(range(nreq, n)), [], '        '), f"    return {aw}_slow_args(extra{''.join(f', a{i}' for i in range(n))})"]
    elif named:  # many: every one given, or a function per subset (`_Given`), found by which are left out
        unset, args = [f'a{i} is ...' for i in range(nreq, n)], ', '.join(f'a{i}' for i in range(n))
        src.lines += [f"        if {' or '.join(unset)}:", f"            if {' and '.join(unset)}: return {aw}_disp(_name{kws(range(nreq))})",
                      f"            return {aw}_given[{', '.join(unset)}]({args})",
                      f"        return {aw}_disp(_name{kws(range(n))})", f"    return {aw}_slow_args(extra, {args})"]
    elif given is None:
        src.lines += [f"        if not extra: return {aw}_disp(_name{kws(range(nreq))})",  # the usual call
                      f"        return {aw}_keyed[_tuple(extra)]({req[2:]}{', ' if nreq else ''}extra)", f"    return {aw}_slow_kw(extra{req})"]
    else:
        src.lines += [f"        return {aw}_disp(_name{kws([*range(nreq), *given])})",
                      f"    return {aw}_slow_args({{}}{''.join(f', a{i}' if i < nreq or i in given else ', ...' for i in range(n))})"]
    text = '\n'.join(src.lines)
    if (code := _inline_codes.get(text)) is None:
        if len(_inline_codes) >= _INLINE_CODES_MAX: del _inline_codes[next(iter(_inline_codes))]  # bounded: the oldest shape goes
        ns: JsonDict = {}
        exec(compile(text, '<funccall tool code>', 'exec'), ns)  # noqa: S102 - made here: numbered names and `_cN` globals only. (Never run under
        # this name: each tool runs a copy under a name of its own, see `_named_code`)
        code = ns['tool'].__code__
        code = _inline_codes[text] = code.replace(co_consts=tuple(_UNSET if c is ... else c for c in code.co_consts))
    return code, text

def _with_names(code: types.CodeType, origs: Sequence[str], pynms: Sequence[str] = ()) -> types.CodeType:
    """`code` with the properties' own names, which need not be identifiers ('approval-policy'), in place of its
    placeholders `_K0`... among its constants (the keyword names of its calls), and the parameters' names in place of
    `_P0`... (the keys of `extra` it reads the optional arguments from)"""
    names = {**{f'_K{i}': orig for i, orig in enumerate(origs)}, **{f'_P{i}': py for i, py in enumerate(pynms)}}
    def named(c):
        if type(c) is str: return names.get(c, c)
        if type(c) is tuple and c and all(type(x) is str and x in names for x in c): return tuple(names[x] for x in c)
        return c
    return code.replace(co_consts=tuple(map(named, code.co_consts)))

def _tool_source(text: str, origs: Sequence[str], pynms: Sequence[str]) -> str:
    "A shape's source `text` as one tool runs it: which parameter and property each `a0`... is there, in comments after its last line"
    return '\n'.join([text, '# in this tool (`_K0`... are the properties\' names, `_P0`... the parameters\'):',
                      *(f'#   a{i} (_K{i}, _P{i}): parameter {py!r}, property {orig!r}' for i, (py, orig) in enumerate(zip(pynms, origs)))]) + '\n'

class _Keyed(dict):
    """One tool's calls that give some of its optional arguments: the keys they give (a tuple, in the call's order) ->
    the code made for their set (`_inline_code` with `given`), which tests those arguments and sends every one on, made on
    first need. A tool keeps `_KEYED_MAX` of them; a call giving another set after that, or a key that is no optional
    parameter's, takes the checked way"""
    __slots__ = ('checked', 'alone', 'index')

    def __init__(self, checked: _Checked, alone: dict):
        super().__init__()
        p = checked.parts
        self.checked, self.alone, self.index = checked, alone, {nm: i for i, nm in enumerate(p.pynms) if i >= p.nreq}

    def __missing__(self, keys: tuple):
        c, p = self.checked, self.checked.parts
        # in the parameters' order, not the call's: the arguments are sent as the checked way sends them, and every order of
        # one set of keys has the same code
        given = tuple(sorted(self.index.get(k, -1) for k in keys))
        if -1 in given or len(self) >= _KEYED_MAX:
            return lambda *args: c.checked_kw(args[-1], *args[:-1])
        g = {**_INLINE_GLOBALS, '_disp': c.disp, '_name': c.name, '_slow_args': c.checked}
        schemas = p.schemas if c.check else [True] * len(p.schemas)
        code, text = _inline_code(schemas, p.nreq, g, iscoroutinefunction(c.disp), self.alone, False, given)
        src = _tool_source(text, p.origs, p.pynms)
        fn: Any = types.FunctionType(_named_code(_with_names(code, p.origs, p.pynms), p, keyed=True, src=src), g)
        self[keys] = fn
        fn.__source__ = src
        return fn

_KEYED_MAX = 64

class _Given(dict):
    """One named tool's calls (see `_inline_code`) that give some of its many optional arguments: which of them are
    left out (a tuple, True for each one not given) -> a function of the tool's arguments that sends the given ones as
    keywords, made on first need. A tool keeps `_GIVEN_MAX` of them; a call giving another subset after that sends its
    arguments as a dict (`send`)"""
    __slots__ = ('checked',)

    def __init__(self, checked: _Checked):
        super().__init__()
        self.checked = checked

    def __missing__(self, unset: tuple):
        if len(self) >= _GIVEN_MAX: return self.checked.send
        c, p = self.checked, self.checked.parts
        code, text = _given_code(len(p.origs), p.nreq, unset)
        src = _tool_source(text, p.origs, p.pynms)
        code = _with_names(code, p.origs).replace(co_filename=source_name(f'tool {p.name!r}, some arguments given', src))
        fn: Any = types.FunctionType(code, {'_disp': c.disp, '_name': c.name})
        self[unset] = fn
        fn.__source__ = src
        return fn

_GIVEN_MAX = 64

@functools.lru_cache(maxsize=256)
def _given_code(n: int, nreq: int, unset: tuple) -> tuple[types.CodeType, str]:
    "The code (and its source) that sends the required arguments and the optional ones not `unset` (of `n`, `nreq` required) as keywords"
    given = [i for i in range(n) if i < nreq or not unset[i - nreq]]
    text = (f"def send({', '.join(f'a{i}' for i in range(n))}):\n"
            f"    return _disp(_name{''.join(f', _K{i}=a{i}' for i in given)})")
    ns: JsonDict = {}
    exec(compile(text, '<funccall tool code>', 'exec'), ns)  # noqa: S102 - made here: numbered names only (each tool runs a renamed copy)
    return ns['send'].__code__, text


# tools of one shape (the same tests on the same positions) share one compiled code: each tool has its constants in its own
# globals, and its property names in its own copy of the code (`_with_names`). The 1,340 tools of the corpus have 560 shapes:
# room for several such sets, and a full cache drops its oldest shape only (emptying it would compile every shape again)
_inline_codes: dict = {}
_INLINE_CODES_MAX = 4096

class _F(Exception):
    "Raised inside a tool's inline tests: this call takes the checked way"

# --- callables ----------------------------------------------------------------------------------------

class _Unset:
    "The type of `_UNSET` alone: the loop of quick tests lets it through an optional argument's type test, and no caller's value"
    __slots__ = ()

_UNSET = _Unset()  # what a generated function gets for an argument its caller left out
_LATER = frozenset((_Unset,))  # an optional argument's types before its quick test is made: only "not given" passes
_or_unset_sets: dict = {}

_shared_tuples: dict = {}

def _shared(t: tuple) -> tuple:
    "`t`, or the equal tuple another tool keeps (types of arguments: the few hundred shapes of a thousand tools)"
    if (u := _shared_tuples.get(t)) is None:
        u = t
        if len(_shared_tuples) < 4096: _shared_tuples[t] = t  # (when full, new shapes are kept by their tools alone)
    return u

def _or_unset(ts: frozenset) -> frozenset:
    "`ts` and `type(_UNSET)`: the types an optional argument may have in the loop of quick tests (one set shared per `ts`)"
    if (u := _or_unset_sets.get(ts)) is None:
        u = ts | {_Unset}
        if len(_or_unset_sets) < 256: _or_unset_sets[ts] = u  # (sets of Python types: a few dozen at most)
    return u
_COUNTED = 1000  # the most problems a bad call's check finds: the error counts them, and shows the first `MAX_SHOWN`
_ONE_BY_ONE = 50  # the most nulls in objects tried one at a time, when not all of them can go at once
# what the inline code reads, by names no parameter has (`a0`... are its parameters)
_INLINE_GLOBALS = {'_F': _F, '_tuple': tuple, '_type': type, '_str': str, '_int': int, '_list': list, '_dict': dict, '_len': len,
                   '_is_json': is_json, '_SC': _SCALAR_TYPES}

@functools.lru_cache(maxsize=64)
def _first_code(n: int, is_async: bool) -> tuple[types.CodeType, str]:
    """The code a tool starts with, for `n` parameters `a0`...: the call goes the checked way (`_slow_args`), which on
    the first call gives the tool code of its own (see `_Inline`). Its names are globals of the tool's own (and numbered
    parameters, renamed for the tool), so no parameter name (`type`, `kw`, `self`) can shadow them. Returns its source too."""
    aw = 'await ' if is_async else ''
    text = (f"{'async ' if is_async else ''}def tool({''.join(f'a{i}=_U, ' for i in range(n))}**extra):\n"
            f"    return {aw}_slow_args(extra{''.join(f', a{i}' for i in range(n))})")
    ns: JsonDict = {'_U': _UNSET}
    exec(compile(text, source_name(f'tool entry ({n} parameters)', text, shared=True), 'exec'), ns)  # noqa: S102 - fixed text: only numbered names go in
    return ns['tool'].__code__, text

_HOT = 4  # calls of a tool through the loop of quick tests before its shape's code is compiled, when no tool compiled it yet

class _Checked:
    """The checked way of one built tool: names, Python values to JSON, and the schema's validator. What only calls
    need is made when a call needs it: on the first call the quick test of each argument (see `_arg_test`), tried in a
    loop (`quick`); once the tool is called again and again, code of its own with the tests written out (`_inline_code`,
    compiled once per shape and shared); the validator, when a call fails a quick test."""
    __slots__ = ('disp', 'check', 'parts', 'renamed', 'optional', 'validator', 'fn', 'types', 'tests', 'calls', 'nullable',
                 'gave_optional', '__weakref__')
    disp: Callable[..., Any]  # the dispatcher, called as `disp(name, **arguments)`
    check: bool
    parts: _Parts
    validator: Validator | None
    fn: Any         # a weak reference to the tool (None before `mk_tool` sets it)
    # made on the first call that needs them (None before): renamed properties, optional ones, each argument's quick types and test
    renamed: Any
    optional: Any
    types: Any
    tests: Any
    calls: int
    gave_optional: bool

    def __init__(self, parts: _Parts, disp: Callable[..., Any], check: bool):
        self.disp, self.check, self.parts, self.validator, self.fn = disp, check, parts, None, None
        self.renamed = self.optional = self.types = self.tests = None  # made on the first call that needs them
        self.calls, self.gave_optional = 0, False  # gave_optional: one of the first calls gave an optional argument
        self.nullable: dict | None = None  # optional property -> whether its schema takes null, found on the first null it gets

    name = property(lambda self: self.parts.name)  # (from its parts, not a slot of its own: a thousand tools keep one less each)
    schema = property(lambda self: self.parts.schema)

    def _names(self):
        p = self.parts
        self.renamed = {orig: py for py, orig in zip(p.pynms, p.origs) if py != orig}  # properties whose parameter is spelt otherwise
        self.optional = p.origs[p.nreq:]

    def validator_of(self):
        "The schema's validator, compiled on first need"
        if self.validator is None:
            from ._jsonschema import compile_schema  # (imported here: the validator imports the schema module)
            self.validator = compile_schema(self.schema, where=f"Tool {self.name!r}")
        return self.validator

    def takes_null(self, k: str) -> bool:
        "Whether optional property `k`'s own schema takes null: asked with `{k: null}` alone, so no other key's problem counts"
        if self.nullable is None: self.nullable = {}
        if (v := self.nullable.get(k)) is None:
            from ._jsonschema import key_path
            at = key_path('', k)
            v = self.nullable[k] = not any(p.path == at for p in self.problems({k: None}))
        return v

    def not_given(self, kw: dict) -> dict:
        """`kw` without the nulls that mean "not given": every optional property's whose schema takes no null, however many
        (where the schema takes null, null is a value: it is sent, as `call_func` passes `None` to an annotation that takes it)"""
        if None not in kw.values(): return kw  # (no null at all: the usual call, refused or not)
        drop = [k for k in self.optional if k in kw and kw[k] is None and not self.takes_null(k)]
        return {a: v for a, v in kw.items() if a not in drop} if drop else kw

    def problems(self, kw: dict) -> list:
        "Every problem with `kw`, up to `_COUNTED` (the error counts them); the generated check first: most calls are valid"
        return self.validator_of().problems(kw, '', _COUNTED)

    def first(self, extra: dict, *args):
        "The tool's first call: its quick tests made and tried (its shape's code taken at once when made already)"
        fn = self.fn() if self.fn is not None else None
        if fn is None: return self.checked(extra, *args)
        if self.check and not _root_is_quick(self.schema):  # a root that says more than its properties: the checked way
            fn.__globals__['_slow_args'] = self.checked
            return self.checked(extra, *args)
        # an optional argument's test is made when it is first given: most calls leave most of them out
        n = len(self.parts.schemas)
        self.types, self.tests = (_LATER,) * n, (None,) * n
        self._make(range(self.parts.nreq))
        fn.__globals__['_slow_args'] = self.quick
        return self.quick(extra, *args)

    def _make(self, idx):
        "The quick tests of the arguments at `idx`, in their places (tuples: tools of one shape share their types')"
        types, tests = list(self.types), list(self.tests)
        for i in idx:
            ps = self.parts.schemas[i]
            ts, c = _arg_test(ps, self.schema) if self.check else (_ANY_JSON, is_json)  # unchecked: only what isn't JSON is converted
            # an argument without a quick test (a `$ref`, a pattern, a `oneOf`) is checked alone by the validator: not the checked
            # way. The validator is compiled when such an argument is first given (most calls leave it out; it is most of the memory)
            if ts is _NOTHING and self.check and isinstance(ps, (dict, bool)): ts, c = _ANY_JSON, self._alone(i)
            types[i], tests[i] = ts if i < self.parts.nreq else _or_unset(ts), c
        self.types, self.tests = _shared(tuple(types)), tuple(tests) if any(c is not None for c in tests) else _shared(tuple(tests))

    def _made(self, args: tuple) -> bool:
        "Whether an optional argument given in `args` for the first time had its quick test made now"
        later = [i for i in range(self.parts.nreq, len(args)) if args[i] is not _UNSET and self.types[i] is _LATER]
        if later: self._make(later)
        return bool(later)

    def _alone(self, i: int):
        "The validator's check of argument `i` alone, compiled when first needed (it then stands in its test's place)"
        made: list[Any] = []
        me: Any = weakref.ref(self)  # (a weak reference: the tool keeps no cycle, so dropping it frees it at once)
        def check(v) -> bool:
            if not made: made.append(me().validator_of().property_check(me().parts.origs[i]))
            return made[0](v)
        return check

    def inline(self, fn):
        "Give tool `fn` code of its own, its quick tests written out (see `_Inline`)"
        g, p = fn.__globals__, self.parts
        if _LATER in self.types: self._make([i for i in range(p.nreq, len(p.schemas)) if self.types[i] is _LATER])
        g.update(_INLINE_GLOBALS, _disp=self.disp, _name=self.name, _slow_args=self.checked, _slow_kw=self.checked_kw)
        schemas = p.schemas if self.check else [True] * len(p.schemas)  # unchecked: only what isn't plain JSON is converted
        alone = {i: c for i, ((ts, c), s) in enumerate(zip(zip(self.types, self.tests), schemas)) if _quick(s) is None and c is not None}
        # a parameter per optional argument where there are few, or where the first calls gave some: `**extra` pays off
        # for calls of the required arguments alone, and costs more for each optional one given (see `_inline_code`)
        named = self.gave_optional or len(p.schemas) - p.nreq <= _NAMED_MAX
        if named: g['_given'] = _Given(self)  # (the table of subsets its code reads; `**extra` code reads the keys')
        else: g['_keyed'] = _Keyed(self, alone)
        code, text = _inline_code(schemas, p.nreq, g, iscoroutinefunction(fn), alone, named)
        fn.__source__ = src = _tool_source(text, p.origs, p.pynms)
        fn.__code__ = _named_code(_with_names(code, p.origs), p, src=src)

    def quick(self, extra: dict, *args):
        "A call tried against the quick tests in a loop, before the tool has code of its own; the checked way when one fails"
        self.calls += 1
        if not self.gave_optional: self.gave_optional = any(a is not _UNSET for a in args[self.parts.nreq:])
        if self.calls >= _HOT and (fn := self.fn()) is not None: self.inline(fn)  # called often: worth its code (this call ends here)
        if not extra and (self._passes(args) or self._made(args) and self._passes(args)): return self.send(*args)
        return self.checked(extra, *args)

    def send(self, *args):
        "Dispatch a call that passed its tests, from the tool's arguments in its parameters' order (`_UNSET` for one not given)"
        return self.disp(self.name, **{orig: v for orig, v in zip(self.parts.origs, args) if v is not _UNSET})

    def _passes(self, args: tuple) -> bool:
        "Whether every argument passes its quick test"
        for v, ts, c in zip(args, self.types, self.tests):  # an optional argument's types take `_UNSET`, a required one's don't
            if type(v) not in ts or c is not None and v is not _UNSET and not c(v): return False
        return True

    def checked_kw(self, extra: dict, *args):
        "The checked way, from the required arguments and `extra`, which holds the optional ones given (by their parameters' names)"
        p = self.parts
        return self.checked(extra, *args, *(extra.pop(nm, _UNSET) for nm in p.pynms[p.nreq:]))

    def checked(self, extra: dict, *args):
        "The checked way, from the tool's arguments in its parameters' order (`_UNSET` for one not given)"
        return self({orig: v for orig, v in zip(self.parts.origs, args) if v is not _UNSET}, extra)

    def __call__(self, kw: dict, extra: dict):
        if self.renamed is None: self._names()
        problems = []
        for k, v in extra.items():
            if k in self.renamed and k in kw:  # (`_names` set `renamed`)
                problems.append(Problem(k, f"given twice, as {self.renamed[k]!r} and as {k!r}"))  # pyright: ignore[reportOptionalSubscript]
            else: kw[k] = v  # a property by its own name ('approval-policy'), or an extra key: the schema decides
        bad = []
        if not is_json(kw):  # (one walk of the whole: the usual call is JSON already, however many containers it holds)
            for k, v in kw.items():
                if type(v) not in _SCALAR_TYPES and not is_json(v):  # (a scalar of an exact JSON type is JSON: no call to ask)
                    try: kw[k] = jsonable(v)
                    except (TypeError, ValueError, RecursionError) as e:
                        bad.append(k)
                        problems.append(Problem(k, str(e) if not isinstance(e, RecursionError) else "nested too deeply to send as JSON"))
            for k in bad: del kw[k]
        if self.check:
            kw, found = self._found(kw)
            problems += [p for p in found if not any(f"key {k!r}" in p.message and not p.path for k in bad)] if bad else found
        if problems: raise ToolInputError.of(self.name, problems, len(problems) >= _COUNTED)
        return self.disp(self.name, **kw)

    @budgeted  # (its checks, the retries too, share one budget for their patterns)
    def _found(self, kw: dict) -> tuple[dict, list]:
        "The arguments without the nulls that mean \"not given\", and their problems"
        kw = self.not_given(kw)
        found = self.problems(kw)
        # likewise inside objects: strict mode makes every key required and nullable, so a model sends null for "not given".
        # All at once when that clears their problems and raises none (the usual case, however many); else one key at a
        # time, kept only when it does: a required key's null stays reported
        if nulls := [at for at, m in found if at and m.endswith('got null')]:
            kw2 = _without_nulls(kw, set(nulls), '')
            if set(found2 := self.problems(kw2)) < set(found): kw, found = kw2, found2
            else:
                for at in nulls[:_ONE_BY_ONE]:
                    kw2 = _without_nulls(kw, {at}, '')
                    if set(found2 := self.problems(kw2)) < set(found): kw, found = kw2, found2
        return kw, found

def _without_nulls(v: Any, paths: set, path: str) -> Any:
    "`v` without the keys at `paths` whose value is null (walked iteratively: arguments may be deeply nested)"
    from ._jsonschema import key_path  # (imported here: the validator imports the schema module)
    out = dict(v) if type(v) is dict else list(v) if type(v) is list else v
    todo: list[tuple[Any, str]] = [(out, path)]
    while todo:
        node, at = todo.pop()
        items = list(node.items()) if type(node) is dict else enumerate(node)
        for k, x in items:
            sub = key_path(at, k) if type(node) is dict else f'{at}[{k}]'
            if x is None and sub in paths and type(node) is dict: del node[k]
            elif type(x) in (dict, list) and any(p.startswith(sub) for p in paths):
                node[k] = dict(x) if type(x) is dict else list(x)  # pyright: ignore[reportArgumentType]  # (a list: tested above)
                todo.append((node[k], sub))
    return out

def mk_tool(
    dispfn: Callable[..., Any],  # called as `dispfn(tool_name, /, **arguments)`; may be async
    tool: Any,            # a tool in any format `tool_parts` takes
    check: bool=True,     # check the arguments against the tool's schema before dispatching
) -> BuiltTool:           # a function with the tool's signature, name and description
    "Create a callable function from a JSON schema tool definition"
    parts = _parts(tool)
    sig, pynms, name, s, n, nreq = parts.sig, parts.pynms, parts.name, parts.schema, len(parts.pynms), parts.nreq
    is_async = iscoroutinefunction(dispfn)
    checked = _Checked(parts, dispfn, check)
    g = {'_U': _UNSET, '_slow_args': checked.first, '__name__': __name__}
    code, fn_source = _first_code(n, is_async)
    fn: Any = types.FunctionType(_named_code(code, parts), g, None, (_UNSET,) * nreq or None)
    fn.__kwdefaults__ = dict.fromkeys(pynms[nreq:], _UNSET) or None
    fn.__signature__, fn.__doc__, fn.__name__, fn.__qualname__ = sig, parts.desc, name, name
    fn.__annotations__ = dict(zip(pynms, parts.annos))
    fn.__tool_schema__ = {'name': name, 'description': parts.desc, 'input_schema': s}  # what `get_schema` gives back
    fn.__source__ = fn_source  # the generated code it runs now (its own once it is called often: see `_Checked.inline`)
    checked.fn = weakref.ref(fn)
    return fn

def _named_code(code: types.CodeType, parts: _Parts, keyed: bool = False, src: str | None = None) -> types.CodeType:
    """`code` (a template: `a0`... for the arguments) with the tool's name and its parameters' names; its parameters
    (every argument's, or the required ones' alone and `**extra`) required ones first, the optional ones keyword-only;
    `keyed`: the code for some optional keys (see `_Keyed`), whose parameters stay as they are. `src`: the tool's own
    copy of its source, under a filename naming the tool (a template's shared code keeps the template's)"""
    k, nreq, name, pynms = code.co_argcount, parts.nreq, parts.name, parts.pynms
    named: JsonDict = {'co_name': name if name.isidentifier() else 'tool', **({'co_qualname': name} if hasattr(code, 'co_qualname') else {})}
    if src is not None: named['co_filename'] = source_name(f"tool {name!r}{', some keys given' if keyed else ''}", src)
    if keyed: return code.replace(co_varnames=_keyed_names(code.co_varnames, pynms), **named)
    return code.replace(co_varnames=(*pynms[:k], *_locals(code, k, pynms)), co_argcount=nreq, co_kwonlyargcount=k - nreq, **named)

def _locals(code: types.CodeType, n: int, pynms: Sequence[str]) -> tuple:
    "The template's own local names (`extra`, `x1`, `k2`), renamed apart from every parameter's"
    own = code.co_varnames[n:]
    if not any(nm in own for nm in pynms): return own
    taken, out = set(pynms), []
    for nm in own:
        while nm in taken: nm = f'_{nm}'
        taken.add(nm); out.append(nm)
    return tuple(out)

def _keyed_names(varnames: tuple, pynms: Sequence[str]) -> tuple:
    "A keyed code's local names: an argument's `a{i}` its parameter's name; its own (`extra`, `x1`) renamed apart from every parameter's"
    args, taken, out = {f'a{i}': nm for i, nm in enumerate(pynms)}, set(pynms), []
    for nm in varnames:
        if nm in args: out.append(args[nm]); continue
        while nm in taken: nm = f'_{nm}'
        taken.add(nm); out.append(nm)
    return tuple(out)
