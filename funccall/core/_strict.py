"""Strict mode: a parameters schema rewritten to the JSON Schema subset a provider's constrained decoding takes.

First, what means one object but is written as several is merged (`_Fold`): a singleton `allOf` or an `allOf`
of objects, a `$ref` beside `properties`, a root `$ref`; what can't merge stays, and is refused below.

Two rule sets, one pass. What the subset can't say as a keyword but a model can read moves into the
description (`notes`); what it can't hold at all (an open object, any JSON value, a mixed tuple, recursion for
Claude) is a `fail`, and the caller sends the tool non-strict. Annotations that constrain nothing (`$schema`,
`$id`, `$comment`, `examples`) are dropped, never a reason to go non-strict.

OpenAI, as its Structured Outputs guide documents the subset: every object closed with every property
required (an optional one becomes nullable: `null` means "use the default", which `call_func` does); kept:
`pattern`, the listed `format`s, number bounds and `multipleOf`, `minItems`/`maxItems`, `anyOf`, `enum`, `const`,
`$ref`/`$defs` (recursion too); not kept: `default`, `minLength`/`maxLength`, `uniqueItems`,
`minProperties`/`maxProperties`; the root an object; at most 10 levels of nesting and 5000 properties.

Claude, as its structured outputs page documents "JSON Schema limitations": every object
`additionalProperties: false`; no numeric bounds (`minimum`, `maximum`, `multipleOf`...), no string lengths, no
`maxItems`, `minItems` only 0 or 1, `enum` of primitives only, no recursion, `pattern` without backreferences,
lookaround or word boundaries, the listed `format`s. Optional properties stay optional.
"""
from __future__ import annotations

import json, re
from typing import Any

from ._json import too_deep
from ._typing import JsonDict

Note = tuple[str, str]  # (where in the schema, as a JSON Pointer; what was changed or can't be held)

__all__ = ['esc', 'hint', 'ANNOTATIONS', 'normalize', 'strict_pass', 'OPENAI', 'ANTHROPIC', 'StrictRules', 'union_count',
           'optional_count', 'nullable']

ANNOTATIONS = {'$schema', '$id', '$comment', '$anchor', 'examples', 'readOnly', 'writeOnly', 'deprecated'}  # constrain nothing

def esc(k: str) -> str: return k.replace('~', '~0').replace('/', '~1')  # a JSON pointer segment

def hint(s: JsonDict, text: str) -> JsonDict:
    "`s` with `text` added to its description, so the model still reads what the schema can't say"
    d = s.get('description')
    return {**s, 'description': f'{d} ({text})' if d else text}

# --- one shape for what JSON Schema spells several ways ---------------------------------------------------

_BY_TYPE = {'string': {'pattern', 'format', 'minLength', 'maxLength', 'contentEncoding', 'contentMediaType'},
            'number': {'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'},
            'array': {'items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains'},
            'object': {'properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames',
                       'minProperties', 'maxProperties'}}
_BY_TYPE['integer'] = _BY_TYPE['number']
_OWN = {k for ks in _BY_TYPE.values() for k in ks}

def _split_types(s: dict) -> dict:
    "`{'type': [a, b], ...}` as `anyOf` of one type each, every keyword going with the type it applies to"
    tys = s['type']
    if len(tys) == 1: return {**s, 'type': tys[0]}
    shared = {k: v for k, v in s.items() if k != 'type' and k not in _OWN}
    return {**shared, 'anyOf': [{'type': t, **{k: v for k, v in s.items() if k in _BY_TYPE.get(t, ())}} for t in tys]}

def _pointer(root: dict, ref: str):
    "The node JSON pointer `ref` (`#/properties/a`) names in `root`, or None"
    node = root
    for part in ref[2:].split('/'):
        part = part.replace('~1', '/').replace('~0', '~')
        if isinstance(node, dict) and part in node: node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node): node = node[int(part)]
        else: return None
    return node if isinstance(node, dict) else None

def _inline_pointers(s, root: dict, seen: tuple = ()):
    "`s` with `$ref`s to places other than the root's definitions (`#/properties/a`, as zod writes a repeat) inlined"
    if isinstance(s, list): return [_inline_pointers(x, root, seen) for x in s]
    if not isinstance(s, dict): return s
    ref = s.get('$ref')
    if isinstance(ref, str) and ref.startswith('#/') and not ref.startswith(('#/$defs/', '#/definitions/')) and ref not in seen:
        target = _pointer(root, ref)
        if target is not None:
            return _inline_pointers({**target, **{k: v for k, v in s.items() if k != '$ref'}}, root, (*seen, ref))
    return {k: v if k in ('enum', 'const', 'default', 'examples') else _inline_pointers(v, root, seen) for k, v in s.items()}

def normalize(s: Any) -> Any:
    "`s` with type lists as `anyOf`, `oneOf` as `anyOf`, draft-07 `definitions` as `$defs`, and pointer `$ref`s inlined (a copy)"
    return _norm(_inline_pointers(s, s)) if isinstance(s, dict) else s

def _norm(s: Any) -> Any:
    if isinstance(s, list): return [_norm(x) for x in s]
    if not isinstance(s, dict): return s
    if isinstance(s.get('type'), list): s = _split_types(s)
    if 'oneOf' in s and 'anyOf' not in s: s = {**{k: v for k, v in s.items() if k != 'oneOf'}, 'anyOf': s['oneOf']}
    out: JsonDict = {}
    for k, v in s.items():
        if k in ('properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas'):
            out['$defs' if k == 'definitions' else k] = {n: _norm(x) for n, x in v.items()} if isinstance(v, dict) else v
        elif k == '$ref' and isinstance(v, str) and v.startswith('#/definitions/'): out[k] = '#/$defs/' + v[len('#/definitions/'):]
        elif k in ('default', 'enum', 'const', 'examples', 'required'): out[k] = v
        else: out[k] = _norm(v)
    return out

def _accepts_null(s: dict) -> bool:
    t = s.get('type')
    if t == 'null' or (isinstance(t, list) and 'null' in t): return True
    if None in s.get('enum', ()) or ('const' in s and s['const'] is None): return True
    return any(_accepts_null(x) for x in s.get('anyOf', ()))

_ANNOTS = ('description', 'title', 'default')

def _one_value(s: dict) -> bool:
    """Whether `s` takes exactly one value (`const`, or an `enum` of one): a discriminated union's tag, whose null would
    leave the form unknown (each form has its own default)"""
    return 'const' in s or (isinstance(s.get('enum'), list) and len(s['enum']) == 1)

def nullable(s: JsonDict) -> JsonDict:
    "`s` also taking `null`, its annotations kept outside the union"
    if _accepts_null(s): return s
    out = {k: s[k] for k in _ANNOTS if k in s}
    inner = {k: v for k, v in s.items() if k not in _ANNOTS}
    out['anyOf'] = [*inner['anyOf'], {'type': 'null'}] if list(inner) == ['anyOf'] else [inner, {'type': 'null'}]
    return out

# --- the rules --------------------------------------------------------------------------------------------

class StrictRules:
    "What one provider's strict mode keeps, moves into the description, and can't hold"
    who: str; keep: set[str]; formats: set[str]; close_optional: bool; recursion: bool; min_items_max: int | None
    primitive_enums: bool; simple_patterns: bool; max_depth: int | None; max_props: int | None

    def __init__(self, who: str, keep: set[str], formats: set[str], close_optional: bool, recursion: bool, min_items_max: int | None = None,
                 primitive_enums: bool = False, simple_patterns: bool = False, max_depth: int | None = None, max_props: int | None = None):
        self.who, self.keep, self.formats, self.close_optional, self.recursion = who, keep, formats, close_optional, recursion
        self.min_items_max, self.primitive_enums, self.simple_patterns = min_items_max, primitive_enums, simple_patterns
        self.max_depth, self.max_props = max_depth, max_props

_STRUCT = {'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'const', '$ref', '$defs',
           'description', 'title'}
OPENAI = StrictRules('OpenAI', _STRUCT | {'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
                                          'multipleOf', 'minItems', 'maxItems'},
                     {'date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'},
                     close_optional=True, recursion=True, max_depth=10, max_props=5000)
ANTHROPIC = StrictRules('Claude', _STRUCT | {'pattern', 'format', 'minItems'},
                        {'date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid'},
                        close_optional=False, recursion=False, min_items_max=1, primitive_enums=True, simple_patterns=True)

# keywords no strict subset keeps that a model can still read; anything else unknown constrains nothing we can say
_TO_DESCRIPTION = {'default', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
                   'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'pattern', 'format',
                   'contentEncoding', 'contentMediaType'}
_CANT = {'allOf': 'uses allOf', 'not': 'uses not', 'if': 'uses if/then/else', 'patternProperties': 'has patternProperties',
         'dependentSchemas': 'uses dependentSchemas', 'dependentRequired': 'uses dependentRequired', 'contains': 'uses contains',
         'unevaluatedItems': 'uses unevaluatedItems'}
_SILENT = ANNOTATIONS | {'then', 'else', 'propertyNames', 'unevaluatedProperties', 'nullable'}  # said by the rest, or nothing
_COMPLEX_RE = re.compile(r'\\[1-9bBk]|\(\?<?[=!]')  # backreferences, word boundaries, lookaround
_TYPED = ('type', '$ref', 'anyOf', 'enum', 'const')  # a node holding one of these says what its value is

def _said(k: str, v) -> str:
    if k == 'uniqueItems': return 'items are unique'
    if k == 'format': return f'format: {v}'
    if k == 'contentEncoding': return f'{v}-encoded'
    return f'{k}: {json.dumps(v)}'

def _primitive(v) -> bool: return v is None or isinstance(v, (str, int, float, bool))

class _Pass:
    "One pass making a parameters schema strict; `notes` and `fails` are `(path, what)`"
    def __init__(self, rules: StrictRules, defs: dict):
        self.notes: list[Note] = []
        self.fails: list[Note] = []
        self.r, self.defs, self.nprops = rules, defs, 0

    def root(self, s: dict) -> dict:
        if s.get('type') != 'object': self.fails.append(('', f"is not an object: {self.r.who} needs an object at the root"))
        elif 'properties' not in s and s.get('additionalProperties') is None:  # a tool without parameters, as servers write it
            s = {**s, 'properties': {}}
            self.notes.append(('', 'an object without properties: sent as a tool without parameters'))
        res = self.node({k: v for k, v in s.items() if k != '$defs'}, '', 0)
        if '$defs' in s: res['$defs'] = {k: self.node(v, f'/$defs/{esc(k)}', 0) for k, v in s['$defs'].items()}
        if not self.r.recursion and (cyc := _cycle(self.defs)):
            self.fails.append((f'/$defs/{esc(cyc)}', f'is recursive: {self.r.who} has no recursive schemas'))
        if self.r.max_props and self.nprops > self.r.max_props:
            self.fails.append(('', f'has {self.nprops} properties: {self.r.who} takes at most {self.r.max_props}'))
        return res

    def node(self, s: dict, path: str, depth: int) -> dict:
        s, moved = dict(s), []
        if s.get('default', 0) is None: del s['default']  # null already means "the default"
        if '$ref' in s:
            if not s['$ref'].startswith('#/$defs/') or s['$ref'].rsplit('/', 1)[-1] not in self.defs:
                self.fails.append((path, f"refers to {s['$ref']!r}, which is not in the root $defs"))
            if s.get('description') == '': del s['description']
            if len([k for k in s if k not in ANNOTATIONS]) > 1:  # a `$ref` with siblings is inlined or cut: a one-member union keeps it a reference
                s = {**{k: v for k, v in s.items() if k != '$ref'}, 'anyOf': [{'$ref': s['$ref']}]}
        n = len(self.fails)
        for k in [k for k in s if k in _CANT]: self.fails.append((path, _CANT[k]))
        if 'anyOf' in s: s['anyOf'] = [self.node(x, f'{path}/anyOf/{i}', depth) for i, x in enumerate(s['anyOf'])]
        if 'properties' in s and s.get('type') != 'object':  # object keywords with no `type`: an object, or something unmergeable
            if 'anyOf' in s or 'type' in s: self.fails.append((path, 'has properties beside a $ref, anyOf or type they can\'t merge with'))
            else:
                s['type'] = 'object'
                self.notes.append((path, 'properties without a type: sent as an object'))
        if not any(k in s for k in _TYPED): self.fails.append((path, 'takes any JSON value'))
        if self.r.primitive_enums and not all(map(_primitive, s.get('enum', ()))): self.fails.append((path, 'has an enum of objects or lists'))
        if self.r.primitive_enums and not _primitive(s.get('const')): self.fails.append((path, 'has a const object or list'))
        ty = s.get('type')
        if ty == 'object': s = self.obj(s, path, depth + 1)
        elif ty == 'array': s = self.arr(s, path, depth)
        if len(self.fails) > n: return s  # the tool goes non-strict: one reason per place is enough
        out = {}
        for k, v in s.items():
            if k in self.r.keep and self.fits(k, v): out[k] = v
            elif k in _TO_DESCRIPTION: moved.append((k, v))
            elif k not in _SILENT: self.notes.append((path, f'{k!r} dropped: not JSON Schema {self.r.who} knows'))
        if moved: out = hint(out, '; '.join(_said(k, v) for k, v in moved))
        if moved: self.notes.append((path, f"{', '.join(k for k, _ in moved)} moved to the description (not in {self.r.who}'s strict subset)"))
        return out

    def fits(self, k: str, v) -> bool:
        "Whether keyword `k` with value `v` is inside the subset"
        if k == 'format': return v in self.r.formats
        if k == 'minItems' and self.r.min_items_max is not None: return v <= self.r.min_items_max
        if k == 'pattern' and self.r.simple_patterns: return not _COMPLEX_RE.search(v)
        return True

    def obj(self, s: dict, path: str, depth: int) -> dict:
        extra = s.get('additionalProperties')
        if extra is True and s.get('properties'):  # open, but with its keys listed: strict mode sends the listed ones
            self.notes.append((path, 'additionalProperties: true closed: the model sends only the listed properties'))
            extra = None
        if extra not in (None, False) or ('properties' not in s and extra is not False):
            what = 'a dict[str, V]' if isinstance(extra, dict) else 'an object of any shape'
            self.fails.append((path, f'is {what}: strict mode needs every key listed'))
            return s
        if self.r.max_depth and depth > self.r.max_depth:  # said once, where it goes too deep: nothing below is walked
            self.fails.append((path, f'is nested {depth} deep: {self.r.who} takes at most {self.r.max_depth} levels'))
            return s
        req, props = set(s.get('required', ())), {}
        self.nprops += len(s.get('properties', {}))
        for k, v in s.get('properties', {}).items():
            at = f'{path}/properties/{esc(k)}'
            p = self.node(v, at, depth)
            if k not in req and self.r.close_optional and _one_value(p):  # a tag (`const`): sent as it is, so the form stays known
                self.notes.append((at, 'optional: made required (it has one value)'))
            elif k not in req and self.r.close_optional:
                p = nullable(p)
                self.notes.append((at, 'optional: made required and nullable (null means its default)'))
            props[k] = p
        out = {**s, 'properties': props, 'additionalProperties': False}
        if self.r.close_optional: out['required'] = list(props)
        elif req: out['required'] = [k for k in s['required'] if k in props]
        else: out.pop('required', None)  # `required: []` says nothing
        return out

    def arr(self, s: dict, path: str, depth: int) -> dict:
        if 'prefixItems' in s:
            pre = s['prefixItems']
            if any(p != pre[0] for p in pre) or (s.get('items') not in (None, False, pre[0]) if pre else False):
                self.fails.append((path, 'is a tuple of different types (prefixItems)'))
                return s
            s = {k: v for k, v in s.items() if k != 'prefixItems'}  # one type: `items` plus the length say it all
            if pre: s['items'] = pre[0]
        items = s.get('items')
        if not isinstance(items, dict) or not items: self.fails.append((path, 'is an array of any items'))
        else: s['items'] = self.node(items, f'{path}/items', depth)
        return s

# --- allOf and a `$ref` with object keywords beside it, merged into one object ------------------------------------

_OBJ_KW = {'type', 'properties', 'required', 'additionalProperties'}
_MERGE_SAME = ('description', 'title')  # annotations: the outer one wins, never a conflict

class _Fold:
    """A schema with what strict mode can't send as written, but means one object, merged: a singleton `allOf`, an
    `allOf` of objects, a `$ref` beside `properties` (`{"properties": ..., "$ref": ...}` is both: 2020-12's reading),
    and a root `$ref`. What can't merge (two different schemas for one property) is left for the pass to refuse."""
    def __init__(self, defs: dict, notes: list): self.defs, self.notes = defs, notes

    def root(self, s: dict) -> dict:
        if '$defs' in s: self.defs = {k: self.node(v, f'/$defs/{esc(k)}') for k, v in s['$defs'].items()}  # what a `$ref` inlines is merged too
        body = self.node({k: v for k, v in s.items() if k != '$defs'}, '')
        if '$defs' in s: body['$defs'] = self.defs
        seen = set()  # the root must be an object: a `$ref` to a `$ref` is followed too, each once
        while isinstance(ref := body.get('$ref'), str) and ref not in seen and (target := self.target(ref)) is not None:
            seen.add(ref)
            if (m := _merge({k: v for k, v in body.items() if k not in ('$ref', '$defs')}, self.node(target, ''))) is None: break
            self.notes.append(('', f'the root $ref {ref!r} inlined (the root must be an object)'))
            body = {**m, **({'$defs': body['$defs']} if '$defs' in body else {})}
        return body

    def target(self, ref: str):
        "The definition `ref` names, or None"
        nm = ref[len('#/$defs/'):] if ref.startswith('#/$defs/') else None
        t = self.defs.get(nm) if nm is not None else None
        return t if isinstance(t, dict) else None

    def node(self, s: Any, path: str) -> Any:
        if isinstance(s, list): return [self.node(x, path) for x in s]
        if not isinstance(s, dict): return s
        s = {k: v if k in ('enum', 'const', 'default', 'examples', 'required') else
             {n: self.node(x, f'{path}/{k}/{esc(n)}') for n, x in v.items()} if k in ('properties', '$defs') and isinstance(v, dict) else
             self.node(v, f'{path}/{k}') for k, v in s.items()}
        if isinstance(s.get('allOf'), list) and all(isinstance(x, dict) for x in s['allOf']):
            merged: dict | None = {k: v for k, v in s.items() if k != 'allOf'}
            for x in s['allOf']:
                merged = _merge(merged, self.unref(x)) if merged is not None else None
            if merged is not None:
                self.notes.append((path, f"allOf of {len(s['allOf'])} merged into one schema"))
                s = merged
        if isinstance(s.get('$ref'), str) and _OBJ_KW & s.keys() and (t := self.target(s['$ref'])) is not None:
            m = _merge({k: v for k, v in s.items() if k != '$ref'}, t)
            if m is not None:
                self.notes.append((path, f"$ref {s['$ref']!r} beside object keywords: inlined and merged"))
                s = m
        return s

    def unref(self, x: dict) -> dict:
        "`x`, or the definition it is only a `$ref` to (an `allOf` member is merged with what it names)"
        if list(x) == ['$ref'] and (t := self.target(x['$ref'])) is not None: return t
        return x

def _merge(a: dict, b: dict) -> dict | None:
    "One schema meaning both `a` and `b` (properties joined, required joined; `a`'s title and description), or None where they differ"
    out = dict(a)
    for k, v in b.items():
        if k in _MERGE_SAME and k in out: continue  # the outer schema's words describe the merged one
        if k == 'properties' and isinstance(v, dict) and isinstance(out.get(k), dict):
            ps = dict(out[k])
            for n, x in v.items():
                if n in ps and ps[n] != x: return None  # two schemas for one property: an intersection strict mode can't say
                ps[n] = x
            out[k] = ps
        elif k == 'required' and isinstance(v, list) and isinstance(out.get(k), list): out[k] = [*out[k], *(x for x in v if x not in out[k])]
        elif k not in out or out[k] == v: out[k] = v
        else: return None
    if 'properties' in out and 'type' not in out: out['type'] = 'object'
    return out

def _refs(s, out: set) -> set:
    "The `$defs` names `s` refers to"
    if isinstance(s, dict):
        if isinstance(s.get('$ref'), str) and s['$ref'].startswith('#/$defs/'): out.add(s['$ref'].rsplit('/', 1)[-1])
        for v in s.values(): _refs(v, out)
    elif isinstance(s, list):
        for v in s: _refs(v, out)
    return out

def _reachable_defs(s: dict) -> dict:
    "`s` keeping only the `$defs` its properties reach: a definition nothing uses constrains nothing"
    defs, todo, keep = s['$defs'], _refs({k: v for k, v in s.items() if k != '$defs'}, set()), set()
    while todo:
        nm = todo.pop()
        if nm in keep or nm not in defs: continue
        keep.add(nm)
        todo |= _refs(defs[nm], set())
    out = {k: v for k, v in s.items() if k != '$defs'}
    if keep: out['$defs'] = {k: v for k, v in defs.items() if k in keep}
    return out

def _cycle(defs: dict) -> str | None:
    "The name of a class in `defs` that contains itself, if one does"
    graph = {k: _refs(v, set()) for k, v in defs.items()}
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            nm = todo.pop()
            if nm == start: return start
            if nm in seen or nm not in graph: continue
            seen.add(nm)
            todo += graph[nm]
    return None

def strict_pass(
    s:JsonDict,          # a parameters (or output) schema, canonical or a server's
    rules:StrictRules,   # `OPENAI` or `ANTHROPIC`
) -> tuple[JsonDict, list[Note], list[Note]]:  # (the strict schema, notes, fails), notes and fails as `(path, what)`
    "`s` rewritten to `rules`' subset: what it can't say moved to descriptions (notes), what it can't hold listed (fails)"
    if (why := too_deep(s, 'the schema')): return s, [], [('', why[len('the schema '):])]
    s = normalize({k: v for k, v in s.items() if k not in ANNOTATIONS})
    notes: list[Note] = []
    s = _Fold(s.get('$defs', {}), notes).root(s)
    if '$defs' in s: s = _reachable_defs(s)
    p = _Pass(rules, s.get('$defs', {}))
    p.notes += notes
    res = p.root(s)
    return res, p.notes, p.fails

def union_count(s: Any) -> int:
    "How many nodes of `s` are unions (`anyOf`, or a list of types): Claude counts them across a request's strict tools"
    if isinstance(s, list): return sum(union_count(x) for x in s)
    if not isinstance(s, dict): return 0
    own = 1 if 'anyOf' in s or (isinstance(s.get('type'), list) and len(s['type']) > 1) else 0
    return own + sum(union_count(v) for k, v in s.items() if k not in ('enum', 'const', 'default', 'required'))

def optional_count(s: Any) -> int:
    "How many properties of `s`'s objects are optional: Claude counts them across a request's strict tools"
    if isinstance(s, list): return sum(optional_count(x) for x in s)
    if not isinstance(s, dict): return 0
    own = len([k for k in s.get('properties', {}) if k not in s.get('required', ())]) if isinstance(s.get('properties'), dict) else 0
    return own + sum(optional_count(v) for k, v in s.items() if k not in ('enum', 'const', 'default', 'required'))
