"""Tool schemas in each provider's own form, and seed 004's `function_to_tool`.

Every renderer is a pure post-pass over the canonical schema (`get_schema(f, evalable=True)`): it never
mutates its input and never asks the walker for a special case. One tool in gives one tool out; a list gives
a list, ready for the SDK call:

    client.chat.completions.create(tools=to_openai(fs, strict=True), ...)
    client.responses.create(tools=to_openai_responses(fs), ...)
    client.messages.create(tools=to_anthropic(fs), ...)
    types.Tool(function_declarations=to_gemini(fs))
    [mcp.types.Tool.model_validate(t) for t in to_mcp(fs)]

What a renderer had to change is recorded as `Change`s. Pass `report=Report()` to read them (and the map
of rewritten names), `report='raise'` to make a lossy change a `SchemaError`; by default a lossy change is
a `ProviderWarning`.
"""
from __future__ import annotations

import datetime as dt, hashlib, inspect, json, re, warnings
from typing import Any, Callable, NamedTuple

from ._docs import class_docs
from ._json import jsonable
from ._ns import mk_ns, resolve_nm
from ._types import NoneType, SchemaError, empty, fields, kind, signature, type_name
from .schema import SchemaWarning, _caller_level, _tool_docs, get_schema

__all__ = ['to_openai', 'to_openai_responses', 'to_anthropic', 'to_gemini', 'to_mcp', 'strict_schema', 'tool_name',
           'function_to_tool', 'Report', 'Change', 'ProviderWarning']

class ProviderWarning(SchemaWarning):
    "A renderer changed what a tool means for a provider: a constraint, a shape or a default it can't express"

class Change(NamedTuple):
    "One thing a renderer changed in a tool"
    tool: str    # the tool's name, as funccall named it
    path: str    # where: a JSON pointer into its parameters, '' for the tool itself
    what: str    # what changed, and why
    lossy: bool  # whether the provider no longer enforces something the canonical schema says

    def __str__(self): return f"{self.tool}{self.path and ' ' + self.path}: {self.what}"

class Report:
    "What renderers changed: read it, `check()` it, and map rewritten tool names back with `aliases(ns)`"
    def __init__(self): self.changes, self.names = [], {}  # `names`: name sent to the provider -> funccall's name

    def __iter__(self): return iter(self.changes)
    def __len__(self): return len(self.changes)
    def __repr__(self): return '\n'.join(map(str, self.changes)) or 'Report(no changes)'

    @property
    def lost(self) -> list[Change]:
        "The changes after which the provider no longer enforces something the schema says"
        return [c for c in self.changes if c.lossy]

    def check(self) -> None:
        "Raise `SchemaError` if a change lost meaning"
        if self.lost: raise SchemaError(_lost_msg(self.lost))

    def aliases(
        self,
        ns,     # the namespace the tools came from, as `call_func` takes it
    ) -> dict:  # rewritten name -> callable, to merge into that namespace
        "Callables under the names the provider knows them by: `call_func(nm, args, {**ns, **rep.aliases(ns)})`"
        ns = mk_ns(ns)
        return {sent: resolve_nm(nm, ns) for sent, nm in self.names.items()}

def _lost_msg(lost: list) -> str:
    return 'The provider can\'t express all of these tools:\n' + '\n'.join(f'- {c}' for c in lost)

def _esc(k: str) -> str: return k.replace('~', '~0').replace('/', '~1')  # a JSON pointer segment

def _hint(s: dict, text: str) -> dict:
    "`s` with `text` added to its description, so the model still reads what the schema can't say"
    d = s.get('description')
    return {**s, 'description': f'{d} ({text})' if d else text}

# --- tools in, tools out --------------------------------------------------------------------------------

_PARAM_KEYS = ('input_schema', 'parameters', 'inputSchema')

def _canonical(t) -> dict:
    "A fresh, JSON-safe copy of a tool's canonical schema (so no renderer touches its input): given, or made from a callable"
    if isinstance(getattr(t, 'schema', None), dict) and not isinstance(t, dict): t = t.schema  # a `Tool`
    if isinstance(t, dict):
        if not isinstance(t.get('name'), str): raise SchemaError(f"A tool schema needs a 'name'; got keys {sorted(t)}")
        try: return jsonable(t)
        except TypeError as e: raise SchemaError(f"Tool {t['name']!r}: {e}; make its schema with get_schema(f, evalable=True)") from None
    if callable(t): return get_schema(t, evalable=True)  # a fresh copy each call, defaults JSON-safe
    raise SchemaError(f"Can't make a tool of {t!r:.60}; pass a function, class, callable object or a schema from get_schema")

def _params(s: dict) -> dict:
    "The parameters object of canonical schema `s`, whatever `pname` it was made with"
    k = next((k for k in _PARAM_KEYS if k in s), None)
    k = k or next((k for k, v in s.items() if k not in ('name', 'description') and isinstance(v, dict)), None)
    return s[k] if k else {'type': 'object', 'properties': {}}

_openai_rule = ('OpenAI', re.compile(r'[a-zA-Z0-9_-]{1,64}'), re.compile(r'[^a-zA-Z0-9_-]'), 64)
# provider, as `messages` names it too -> (its name, a valid tool name, a character it rejects, longest name)
_name_rules = {
    'openai': _openai_rule, 'openai_responses': _openai_rule, 'responses': _openai_rule,
    'anthropic': ('Anthropic', *_openai_rule[1:]),
    'gemini': ('Gemini', re.compile(r'[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}'), re.compile(r'[^a-zA-Z0-9_.:-]'), 128),
    'mcp': ('MCP', re.compile(r'[A-Za-z0-9._-]{1,128}'), re.compile(r'[^A-Za-z0-9._-]'), 128),
}

def tool_name(
    nm:str,                # a tool name, e.g. 'calc.add'
    provider:str='openai', # 'openai', 'responses' (or 'openai_responses'), 'anthropic', 'gemini' or 'mcp'
) -> str:                  # `nm` if the provider takes it, else a valid name made from it
    "`nm` rewritten to `provider`'s name rule: dots become dashes (which `resolve_nm` reads back), other characters `_`"
    _, ok, bad, n = _name_rules[provider.lower()]
    if ok.fullmatch(nm): return nm
    new = nm.replace('.', '-') if bad.match('.') else nm
    plain = new  # `resolve_nm` finds 'calc-add' as 'calc.add'; anything more needs the alias map
    new = bad.sub('_', new)
    if provider == 'gemini' and not re.match('[a-zA-Z_]', new): new = '_' + new  # Gemini: a letter or '_' first
    if new != plain or len(new) > n:  # characters lost or cut: a hash keeps two such names apart
        new = new[:n - 9] + '_' + hashlib.sha1(nm.encode()).hexdigest()[:8]
    return new

def _render(tools, provider: str, one: Callable, rename: bool, report) -> Any:
    "Render each tool with `one(schema, name, changes)`, check names, and report what changed"
    if not (report is None or report == 'raise' or isinstance(report, Report)):
        raise TypeError(f"report must be a Report, 'raise' or None, not {report!r}")
    single = not isinstance(tools, (list, tuple))
    rep = report if isinstance(report, Report) else Report()
    n0, res, sent = len(rep.changes), [], {}
    for t in ([tools] if single else tools):
        s = _canonical(t)
        nm = _name(s['name'], provider, rename, rep)
        if nm in sent:
            raise SchemaError(f"Two tools are both named {nm!r} for {_name_rules[provider][0]} ({sent[nm]!r} and {s['name']!r}); rename one")
        sent[nm] = s['name']
        changes: list = []
        res.append(one(s, nm, changes))
        rep.changes += [Change(s['name'], *c) for c in changes]
    _finish(rep, report, n0)
    return res[0] if single else res

def _name(nm: str, provider: str, rename: bool, rep: Report) -> str:
    who, ok = _name_rules[provider][:2]
    if ok.fullmatch(nm): return nm
    if not rename:
        raise SchemaError(f"Tool name {nm!r} is not valid for {who} ({ok.pattern}); pass rename=True or name it with get_schema(f, name=...)")
    new = tool_name(nm, provider)
    rep.names[new] = nm
    rep.changes.append(Change(nm, '', f"renamed {new!r} ({who} names match {ok.pattern})", False))
    return new

def _finish(rep: Report, report, n0: int) -> None:
    "Make the new lossy changes an error or a warning, unless the caller reads the report"
    if isinstance(report, Report): return
    lost = [c for c in rep.changes[n0:] if c.lossy]
    if report == 'raise' and lost: raise SchemaError(_lost_msg(lost))
    if lost: warnings.warn(_lost_msg(lost), ProviderWarning, stacklevel=_caller_level())
    unresolved = [f'{nm!r} as {sent!r}' for sent, nm in rep.names.items() if sent != nm.replace('.', '-')]
    if unresolved:  # `resolve_nm` can't read these back: without the report the caller has no map
        warnings.warn(f"Sent {', '.join(unresolved)}: call_func finds them only through the name map; "
                      "pass report=Report() and merge report.aliases(ns) into the namespace", ProviderWarning, stacklevel=_caller_level())

# --- strict mode (OpenAI Structured Outputs) -------------------------------------------------------------

_ANNOTS = ('description', 'title', 'default')
_STRICT_FORMATS = {'date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'}
_STRICT_KEYS = {'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'const', '$ref', '$defs',
                *_ANNOTS, 'pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum',
                'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems'}
_TYPED = ('type', '$ref', 'anyOf', 'enum', 'const')  # a node holding one of these says what its value is

def _accepts_null(s: dict) -> bool:
    t = s.get('type')
    if t == 'null' or (isinstance(t, list) and 'null' in t): return True
    if None in s.get('enum', ()) or ('const' in s and s['const'] is None): return True
    return any(_accepts_null(x) for x in s.get('anyOf', ()))

def _nullable(s: dict) -> dict:
    "`s` also taking `null`, its annotations kept outside the union"
    if _accepts_null(s): return s
    out = {k: s[k] for k in _ANNOTS if k in s}
    inner = {k: v for k, v in s.items() if k not in _ANNOTS}
    out['anyOf'] = [*inner['anyOf'], {'type': 'null'}] if list(inner) == ['anyOf'] else [inner, {'type': 'null'}]
    return out

class _Strict:
    "One pass making a parameters schema strict; `fails` lists what strict mode can't express"
    def __init__(self): self.notes, self.fails = [], []  # (path, what)

    def root(self, s: dict) -> dict:
        res = self.node({k: v for k, v in s.items() if k != '$defs'}, '')
        if '$defs' in s: res['$defs'] = {k: self.node(v, f'/$defs/{_esc(k)}') for k, v in s['$defs'].items()}
        return res

    def node(self, s: dict, path: str) -> dict:
        s = dict(s)
        if 'default' in s and s['default'] is None: del s['default']  # null already means "the default"
        if '$ref' in s and s.get('description') == '': del s['description']
        if '$ref' in s and len(s) > 1:  # the SDK inlines a `$ref` with siblings; a one-member union keeps it a reference
            s = {**{k: v for k, v in s.items() if k != '$ref'}, 'anyOf': [{'$ref': s['$ref']}]}
        if 'anyOf' in s: s['anyOf'] = [self.node(x, f'{path}/anyOf/{i}') for i, x in enumerate(s['anyOf'])]
        if not any(k in s for k in _TYPED): self.fails.append((path, 'takes any JSON value'))
        n, ty = len(self.fails), s.get('type')
        if ty == 'object': s = self.obj(s, path)
        elif ty == 'array': s = self.arr(s, path)
        if len(self.fails) > n: return s  # the tool goes non-strict: one reason per place is enough
        if (fmt := s.get('format')) and fmt not in _STRICT_FORMATS:
            s = _hint({k: v for k, v in s.items() if k != 'format'}, f'format: {fmt}')
            self.notes.append((path, f"format {fmt!r} is not one strict mode knows: moved to the description"))
        if (enc := s.get('contentEncoding')):
            s = _hint({k: v for k, v in s.items() if k != 'contentEncoding'}, f'{enc}-encoded')
            self.notes.append((path, f"contentEncoding {enc!r} moved to the description"))
        for k in s:
            if k not in _STRICT_KEYS: self.fails.append((path, f'uses {k!r}'))
        return s

    def obj(self, s: dict, path: str) -> dict:
        extra = s.get('additionalProperties')
        if 'properties' not in s or extra not in (None, False):
            what = 'a dict[str, V]' if isinstance(extra, dict) else 'an object of any shape'
            self.fails.append((path, f'is {what}: strict mode needs every key listed'))
            return s
        req, props = set(s.get('required', ())), {}
        for k, v in s['properties'].items():
            at = f'{path}/properties/{_esc(k)}'
            p = self.node(v, at)
            if k not in req:
                p = _nullable(p)
                self.notes.append((at, 'optional: made required and nullable (null means its default)'))
            props[k] = p
        return {**s, 'properties': props, 'required': list(props), 'additionalProperties': False}

    def arr(self, s: dict, path: str) -> dict:
        if 'prefixItems' in s:
            pre = s['prefixItems']
            if any(p != pre[0] for p in pre):
                self.fails.append((path, 'is a tuple of different types (prefixItems)'))
                return s
            s = {k: v for k, v in s.items() if k != 'prefixItems'}  # one type: `items` plus the length say it all
            s['items'] = pre[0]
        if s.get('uniqueItems'):
            s = _hint({k: v for k, v in s.items() if k != 'uniqueItems'}, 'items are unique')
            self.notes.append((path, 'uniqueItems moved to the description (call_func builds the set)'))
        items = s.get('items')
        if not isinstance(items, dict) or not items: self.fails.append((path, 'is an array of any items'))
        else: s['items'] = self.node(items, f'{path}/items')
        return s

def strict_schema(
    s:dict,         # a parameters schema: `get_schema(f, evalable=True)['input_schema']`
    report=None,    # a `Report` to record what changed in
    name:str='',    # the tool's name, for messages
) -> dict:          # the schema under OpenAI's Structured Outputs rules
    "`s` made strict: every object closed with all properties required, optional ones nullable; `SchemaError` if it can't be"
    st = _Strict()
    res = st.root(s)
    if st.fails: raise SchemaError(f"Tool {name!r} can't be strict: " + '; '.join(f"{p or 'its parameters'} {w}" for p, w in st.fails))
    if isinstance(report, Report): report.changes += [Change(name, p, w, False) for p, w in st.notes]
    return res

def _strict_params(params: dict, changes: list) -> tuple[dict, bool]:
    "Strict parameters, or the canonical ones with a report of why strict mode can't hold them"
    st = _Strict()
    res = st.root(params)
    if st.fails:
        why = '; '.join(f"{p or 'its parameters'} {w}" for p, w in st.fails)
        changes.append(('', f"can't be strict ({why}): sent with strict: false", True))
        return params, False
    changes += [(p, w, False) for p, w in st.notes]
    return res, True

# --- OpenAI, Anthropic, MCP --------------------------------------------------------------------------------

def _openai_fn(s: dict, nm: str, strict: bool, changes: list) -> dict:
    d = {'name': nm, 'description': s.get('description', '')}
    if strict: d['parameters'], d['strict'] = _strict_params(_params(s), changes)
    else: d['parameters'] = _params(s)
    return d

def to_openai(
    tools,                # a function (class, callable object, `get_schema` dict), or a list of them
    strict:bool=False,    # Structured Outputs: the model's arguments always fit the schema
    rename:bool=False,    # rewrite names OpenAI rejects (`calc.add` -> `calc-add`) instead of raising
    report=None,          # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
):                        # `{'type': 'function', 'function': {...}}`, or a list of them
    "Tools for OpenAI Chat Completions: `client.chat.completions.create(tools=to_openai(fs))`"
    return _render(tools, 'openai', lambda s, nm, ch: {'type': 'function', 'function': _openai_fn(s, nm, strict, ch)}, rename, report)

def to_openai_responses(
    tools,                # a function (class, callable object, `get_schema` dict), or a list of them
    strict:bool=False,    # Structured Outputs (the Responses API's own default is strict, so it is always sent)
    rename:bool=False,    # rewrite names OpenAI rejects instead of raising
    report=None,          # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
):                        # `{'type': 'function', 'name', 'description', 'parameters', 'strict'}`, or a list
    "Function tools for the OpenAI Responses API: `client.responses.create(tools=to_openai_responses(fs))`"
    def one(s, nm, ch):
        d = _openai_fn(s, nm, strict, ch)
        return {'type': 'function', **d, 'strict': d.get('strict', False)}
    return _render(tools, 'openai_responses', one, rename, report)

def to_anthropic(
    tools,                # a function (class, callable object, `get_schema` dict), or a list of them
    rename:bool=False,    # rewrite names Claude rejects (`calc.add` -> `calc-add`) instead of raising
    report=None,          # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
):                        # `{'name', 'description', 'input_schema'}`, or a list of them
    "Tools for Claude: `client.messages.create(tools=to_anthropic(fs))`"
    one = lambda s, nm, ch: {'name': nm, 'description': s.get('description', ''), 'input_schema': _params(s)}
    return _render(tools, 'anthropic', one, rename, report)

def to_mcp(
    tools,                # a function (class, callable object, `get_schema` dict), or a list of them
    rename:bool=False,    # rewrite names MCP rejects instead of raising (dots are fine)
    report=None,          # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
):                        # `{'name', 'description', 'inputSchema'}`, or a list: `mcp.types.Tool.model_validate` takes each
    "Tools as an MCP server lists them"
    one = lambda s, nm, ch: {'name': nm, 'description': s.get('description', ''), 'inputSchema': _params(s)}
    return _render(tools, 'mcp', one, rename, report)

# --- Gemini ------------------------------------------------------------------------------------------------

_GEMINI_TYPES = {'string': 'STRING', 'integer': 'INTEGER', 'number': 'NUMBER', 'boolean': 'BOOLEAN', 'array': 'ARRAY', 'object': 'OBJECT'}
_GEMINI_KEEP = ('title', 'description', 'default', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
                'minItems', 'maxItems', 'minProperties', 'maxProperties')
_GEMINI_SILENT = {'$schema', '$id', '$comment', 'examples', 'readOnly', 'writeOnly'}  # no meaning a model acts on
_gemini_prop = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]{0,63}')

def _inline(s: dict, defs: dict, stack: tuple = ()) -> dict:
    "Schema `s` without annotations and with its `$ref`s inlined, a class inside itself only named: a shape for a description"
    if '$ref' in s:
        nm = s['$ref'].rsplit('/', 1)[-1]
        if nm in stack: return {'title': nm, 'description': f'a {nm}, as above'}
        return _inline({**defs.get(nm, {}), **{k: v for k, v in s.items() if k != '$ref'}}, defs, (*stack, nm))
    out = {}
    for k, v in s.items():
        if k in ('description', 'default'): continue
        if k == 'properties': out[k] = {nm: _inline(x, defs, stack) for nm, x in v.items()}
        elif k in ('anyOf', 'prefixItems'): out[k] = [_inline(x, defs, stack) for x in v]
        elif k in ('items', 'additionalProperties', 'propertyNames') and isinstance(v, dict): out[k] = _inline(v, defs, stack)
        else: out[k] = v
    return out

class _Gemini:
    "One pass from a canonical parameters schema to Gemini's OpenAPI subset, refs inlined"
    def __init__(self, defs: dict, changes: list): self.defs, self.changes = defs, changes

    def note(self, path: str, what: str, lossy: bool): self.changes.append((path, what, lossy))

    def node(self, s: dict, path: str, stack: tuple = ()) -> dict:
        s, nullable = self.unnull(s)
        if '$ref' in s:
            nm = s['$ref'].rsplit('/', 1)[-1]
            target = {**self.defs[nm], **{k: v for k, v in s.items() if k != '$ref'}}
            if nm not in stack: out = self.node(target, path, (*stack, nm))
            else:
                self.note(path, f'recursion: a {nm} inside a {nm}; Gemini has no references, so this one is sent as JSON text', True)
                out = self.json_text(target, path, stack)
            return {**out, 'nullable': True} if nullable else out
        out = {k: s[k] for k in _GEMINI_KEEP if k in s}
        if 'anyOf' in s: out['anyOf'] = [self.node(x, f'{path}/anyOf/{i}', stack) for i, x in enumerate(s['anyOf'])]
        elif 'enum' in s or 'const' in s: out = self.enum(s, out, path)
        elif (ty := s.get('type')) == 'object':
            if not s.get('properties') or isinstance(s.get('additionalProperties'), dict):
                self.note(path, 'an object without listed properties (a dict): Gemini needs them listed, so it is sent as JSON text', True)
                out = self.json_text(s, path, stack)
                return {**out, 'nullable': True} if nullable else out
            out = self.obj(s, out, path, stack)
        elif ty == 'array': out = self.arr(s, out, path, stack)
        elif ty in _GEMINI_TYPES: out['type'] = _GEMINI_TYPES[ty]
        out = self.constraints(s, out, path)
        if nullable: out['nullable'] = True
        for k in s:
            if k in out or k in _GEMINI_SILENT or k in self._handled: continue
            if k == 'additionalProperties' and s[k] is False: continue  # Gemini's objects hold only their listed properties
            self.note(path, f'{k!r} dropped: Gemini has no such keyword', True)
        if 'default' in out and out.get('type') == 'STRING' and not isinstance(out['default'], (str, NoneType)):
            out['default'] = json.dumps(out['default'])  # an enum sent as strings takes its default as one
        return out

    _handled = {'$ref', 'anyOf', 'enum', 'const', 'type', 'properties', 'required', 'items', 'prefixItems', 'uniqueItems',
                'format', 'contentEncoding', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'nullable'}

    def unnull(self, s: dict) -> tuple[dict, bool]:
        "`s` without its `null` member, and whether it had one: Gemini says `nullable: true` instead"
        if s.get('type') == 'null': return {k: v for k, v in s.items() if k != 'type'}, True
        if isinstance(s.get('type'), list) and 'null' in s['type']:
            tys = [t for t in s['type'] if t != 'null']
            return ({**s, 'type': tys[0]} if len(tys) == 1 else {**s, 'type': None, 'anyOf': [{'type': t} for t in tys]}), True
        if 'enum' in s and None in s['enum']: return {**s, 'enum': [v for v in s['enum'] if v is not None]}, True
        if 'anyOf' not in s or not any(x == {'type': 'null'} for x in s['anyOf']): return s, False
        rest = [x for x in s['anyOf'] if x != {'type': 'null'}]
        s = {k: v for k, v in s.items() if k != 'anyOf'}
        return ({**rest[0], **s} if len(rest) == 1 else {**s, 'anyOf': rest}), True

    def enum(self, s: dict, out: dict, path: str) -> dict:
        vals = s['enum'] if 'enum' in s else [s['const']]
        if all(isinstance(v, str) for v in vals): return {**out, 'type': 'STRING', 'enum': list(vals)}
        lossy = any(isinstance(v, (bool, list, dict)) for v in vals)  # call_func turns "5" back into 5, not "true" into True
        self.note(path, 'enum values sent as strings: Gemini allows enum only on strings' + ('' if lossy else '; call_func turns them back'), lossy)
        return {**out, 'type': 'STRING', 'enum': [v if isinstance(v, str) else json.dumps(v) for v in vals]}

    def obj(self, s: dict, out: dict, path: str, stack: tuple) -> dict:
        props = {}
        for k, v in s['properties'].items():
            at = f'{path}/properties/{_esc(k)}'
            if not _gemini_prop.fullmatch(k): self.note(at, f'Gemini rejects the property name {k!r}; rename the field', True)
            props[k] = self.node(v, at, stack)
        out = {**out, 'type': 'OBJECT', 'properties': props}
        if req := [k for k in s.get('required', ()) if k in props]: out['required'] = req
        return out

    def arr(self, s: dict, out: dict, path: str, stack: tuple) -> dict:
        out = {**out, 'type': 'ARRAY', 'items': self.node(s.get('items') or {}, f'{path}/items', stack)}
        if (pre := s.get('prefixItems')) and any(p != pre[0] for p in pre):
            out = _hint(out, 'items in order: ' + ', '.join(json.dumps(_inline(p, self.defs)) for p in pre))
            self.note(path, 'a tuple of different types: Gemini has no prefixItems, so any listed type may come in any position', True)
        if s.get('uniqueItems'):
            out = _hint(out, 'items are unique')
            self.note(path, 'uniqueItems moved to the description (call_func builds the set)', False)
        return out

    def constraints(self, s: dict, out: dict, path: str) -> dict:
        "String formats and number bounds Gemini can't say, turned into what it can or into the description"
        if (fmt := s.get('format')):
            if fmt == 'date-time': out['format'] = fmt
            else:
                out = _hint(out, f'format: {fmt}')
                self.note(path, f"format {fmt!r} moved to the description: Gemini knows only 'date-time' (call_func still checks it)", False)
        if (enc := s.get('contentEncoding')):
            out = _hint(out, f'{enc}-encoded')
            self.note(path, f'contentEncoding {enc!r} moved to the description (call_func still decodes it)', False)
        for k, bound, op in (('exclusiveMinimum', 'minimum', '>'), ('exclusiveMaximum', 'maximum', '<')):
            if k not in s: continue
            if s.get('type') == 'integer': out[bound] = s[k] + (1 if op == '>' else -1)  # the same bound for integers
            else:
                out = _hint(out, f'{op} {s[k]}')
                self.note(path, f'{k} moved to the description: Gemini has only inclusive bounds', True)
        if 'multipleOf' in s:
            out = _hint(out, f'a multiple of {s["multipleOf"]}')
            self.note(path, 'multipleOf moved to the description', True)
        return out

    def json_text(self, s: dict, path: str, stack: tuple) -> dict:
        "A string holding the value as JSON text: `call_func` parses it back into the dict or class"
        shape = json.dumps(_inline({k: v for k, v in s.items() if k not in ('title',)}, self.defs, stack), separators=(',', ':'))
        out = _hint({'type': 'STRING', **({'description': s['description']} if 'description' in s else {})}, f'JSON text matching {shape}')
        if 'default' in s: out['default'] = None if s['default'] is None else json.dumps(s['default'])
        return out

def _gemini_fn(s: dict, nm: str, changes: list) -> dict:
    d = {'name': nm, 'description': s.get('description', '')}
    params = _params(s)
    if params.get('properties'):  # Gemini rejects an OBJECT without properties: a tool without parameters leaves them out
        d['parameters'] = _Gemini(params.get('$defs', {}), changes).node({k: v for k, v in params.items() if k != '$defs'}, '')
    return d

def to_gemini(
    tools,                # a function (class, callable object, `get_schema` dict), or a list of them
    rename:bool=False,    # rewrite names Gemini rejects instead of raising
    report=None,          # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
):                        # `{'name', 'description', 'parameters'}`, or a list: `types.Tool(function_declarations=...)`
    "Gemini function declarations: references inlined (recursion sent as JSON text), nullable and enums as Gemini takes them"
    return _render(tools, 'gemini', _gemini_fn, rename, report)

# --- seed 004: function_to_tool -------------------------------------------------------------------------------

_SEED_SCALARS = {bool: 'boolean', int: 'integer', float: 'number', str: 'string'}
_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

_SEED_FORMATS = {dt.datetime: {'format': 'date-time'}, dt.date: {'format': 'date'}, dt.time: {'format': 'time'},
                 bytes: {'contentEncoding': 'base64'}}  # any other custom type is a plain string

def _enum(values: list) -> dict:
    "`enum`, with a `type` when all values share one"
    tys = {('null' if v is None else _SEED_SCALARS.get(type(v))) for v in values}
    return {'type': tys.pop(), 'enum': values} if len(tys) == 1 and None not in tys else {'enum': values}

def _meta_doc(t) -> str | None:
    "The description in annotation `t`'s `Annotated` metadata: a string, or a pydantic `Field(description=...)`"
    try: meta = kind(t).meta
    except SchemaError: return None
    for m in meta:
        if isinstance(m, str): return m
        if isinstance(getattr(m, 'description', None), str): return m.description
    return None

class _Seed004:
    "Seed 004's type table: Optional unwrapped, unions as `oneOf`, classes inline, anything unknown a string"
    def __init__(self): self.inside = {}  # class -> JSON pointer of its schema, while inside it

    def schema(self, t, at: str) -> dict:
        try: info = kind(t)
        except SchemaError: return {'type': 'string'}  # seed 004: an unrecognised type is a string
        return _seed_handlers[info.kind](self, info, at)

    def obj(self, info, at: str) -> dict:
        t = info.t
        if t in self.inside: return {'$ref': self.inside[t]}  # a class inside itself points at its schema above
        self.inside[t] = at
        try:
            docs = class_docs(t, t.__init__ if info.kind == 'class' else None)
            props, req = {}, []
            for f in fields(info):
                s = self.schema(f.anno, f'{at}/properties/{_esc(f.name)}')
                d = docs.comments.get(f.attr) or f.doc or _meta_doc(f.anno) or docs.doc_params.get(f.attr)
                props[f.name] = {**s, 'description': d} if d else s
                if f.required: req.append(f.name)
            return {'type': 'object', 'properties': props, 'required': req}
        finally: del self.inside[t]

def _seed_union(w, info, at):
    members = [a for a in info.args if a is not NoneType and a is not None]
    if len(members) == 1: return w.schema(members[0], at)  # Optional[T] is T
    return {'oneOf': [w.schema(a, f'{at}/oneOf/{i}') for i, a in enumerate(members)]}

def _seed_tuple(w, info, at):
    args = info.args
    if len(args) == 2 and args[1] is Ellipsis: return {'type': 'array', 'items': w.schema(args[0], f'{at}/items')}
    if not args: return {'type': 'array', 'maxItems': 0}
    return {'type': 'array', 'prefixItems': [w.schema(a, f'{at}/prefixItems/{i}') for i, a in enumerate(args)],
            'minItems': len(args), 'maxItems': len(args)}

def _seed_format(w, info, at):
    return {'type': 'string', **_SEED_FORMATS.get(info.args[0], {})}

def _seed_dict(w, info, at):
    return {'type': 'object', 'additionalProperties': w.schema(info.args[1] if info.args else str, f'{at}/additionalProperties')}

_string = lambda w, info, at: {'type': 'string'}
_seed_handlers = {
    'any': _string, 'object': _string, 'none': lambda w, info, at: {'type': 'null'},
    'scalar': lambda w, info, at: {'type': _SEED_SCALARS[info.args[0]]},
    'literal': lambda w, info, at: _enum([jsonable(v) for v in info.args]),
    'enum': lambda w, info, at: _enum([jsonable(m) for m in info.t]),
    'union': _seed_union,
    'list': lambda w, info, at: {'type': 'array', 'items': w.schema(info.args[0], f'{at}/items')},
    'set': lambda w, info, at: {'type': 'array', 'items': w.schema(info.args[0], f'{at}/items'), 'uniqueItems': True},
    'tuple': _seed_tuple,
    'dict': _seed_dict,
    'format': _seed_format,
    **dict.fromkeys(('typeddict', 'namedtuple', 'dataclass', 'model', 'class'), lambda w, info, at: w.obj(info, at)),
}

def function_to_tool(
    func,   # a documented function (or method, class, callable object)
) -> dict:  # `{'type': 'function', 'function': {'name', 'description', 'parameters'}}`
    "The OpenAI tool for `func` exactly as seed 004 specifies: its own type table, classes inline, no defaults"
    where = getattr(func, '__qualname__', None) or type(func).__qualname__
    docs = _tool_docs(func)
    if not docs.description:
        raise SchemaError(f"Function {where!r} has no docstring; add one (the model reads it to decide when to call the tool)")
    try: annotated = {nm for nm, p in inspect.signature(func).parameters.items() if p.annotation is not inspect.Parameter.empty}
    except (TypeError, ValueError): annotated = set()
    w, props, req = _Seed004(), {}, []
    for p in signature(func, where).params:
        if p.kind in _VAR: continue
        anno = p.anno if p.name in annotated else str  # seed 004: a missing annotation is a string
        s = w.schema(anno, f'#/properties/{_esc(p.name)}')
        d = docs.comments.get(p.name) or _meta_doc(anno) or docs.doc_params.get(p.name)
        props[p.name] = {**s, 'description': d or f"Parameter {p.name} of type {_seed_type_name(anno)}"}
        if p.default is empty: req.append(p.name)
    name = getattr(func, '__name__', None) or type(func).__name__
    return {'type': 'function', 'function': {'name': name, 'description': docs.description,
                                             'parameters': {'type': 'object', 'properties': props, 'required': req}}}

def _seed_type_name(t) -> str:
    try: return type_name(kind(t).t)  # `Annotated` and `NewType` wrappers off: the type the model sends
    except SchemaError: return type_name(t)
