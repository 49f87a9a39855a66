"""Gemini's two wire shapes for a parameters schema.

`FunctionDeclaration.parameters_json_schema` (the Gemini API since late 2025) takes JSON Schema. Its documented
subset: `$id`, `$defs`, `$ref`, `$anchor`, `type`, `format`, `title`, `description`, `enum` (for strings and
numbers), `items`, `prefixItems`, `minItems`, `maxItems`, `minimum`, `maximum`, `anyOf`, `oneOf` (read as `anyOf`),
`properties`, `additionalProperties`, `required`, `propertyOrdering`; "cyclic references ... may only be used within
non-required properties"; "if `$ref` is set on a sub-schema, no other properties, except for those starting as a `$`,
may be set". `Json` rewrites only what those rules reject; other keywords are sent as they are.

`FunctionDeclaration.parameters` (older endpoints) takes an OpenAPI 3.0 subset: no references, `nullable`,
enums only on strings, upper-case types. `Legacy` inlines references, cuts recursion into JSON text and reports
every loss.
"""
from __future__ import annotations

import json, re

from typing import Any

from ._strict import ANNOTATIONS, esc, hint, normalize
from ._typing import JsonDict

Changed = tuple[str, str, bool]  # (where, as a JSON Pointer; what changed; whether something the schema said is lost)

__all__ = ['Json', 'Legacy', 'inline']

# --- the OpenAPI subset of `FunctionDeclaration.parameters` (legacy) -------------------------------------------

_TYPES = {'string': 'STRING', 'integer': 'INTEGER', 'number': 'NUMBER', 'boolean': 'BOOLEAN', 'array': 'ARRAY', 'object': 'OBJECT'}
_KEEP = ('title', 'description', 'default', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
                'minItems', 'maxItems', 'minProperties', 'maxProperties')
_SILENT = ANNOTATIONS | {'propertyNames', 'unevaluatedProperties'}  # no meaning a model acts on, or said by the rest
_gemini_prop = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]{0,63}')

def inline(s: JsonDict, defs: JsonDict, stack: tuple[str, ...] = ()) -> JsonDict:
    "Schema `s` without annotations and with its `$ref`s inlined, a class inside itself only named: a shape for a description"
    if '$ref' in s:
        nm = s['$ref'].rsplit('/', 1)[-1]
        if nm in stack: return {'title': nm, 'description': f'a {nm}, as above'}
        return inline({**defs.get(nm, {}), **{k: v for k, v in s.items() if k != '$ref'}}, defs, (*stack, nm))
    out: JsonDict = {}
    for k, v in s.items():
        if k in ('description', 'default'): continue
        if k == 'properties': out[k] = {nm: inline(x, defs, stack) for nm, x in v.items()}
        elif k in ('anyOf', 'prefixItems'): out[k] = [inline(x, defs, stack) for x in v]
        elif k in ('items', 'additionalProperties', 'propertyNames') and isinstance(v, dict): out[k] = inline(v, defs, stack)
        else: out[k] = v
    return out

class Legacy:
    "One pass from a canonical parameters schema to Gemini's OpenAPI subset, refs inlined"
    def __init__(self, defs: JsonDict, changes: list[Changed]): self.defs, self.changes = defs, changes

    def note(self, path: str, what: str, lossy: bool): self.changes.append((path, what, lossy))

    def node(self, s: dict, path: str, stack: tuple = ()) -> dict:
        s, nullable = self.unnull(s)
        if '$ref' in s:
            nm = s['$ref'].rsplit('/', 1)[-1]
            if not s['$ref'].startswith('#/$defs/') or nm not in self.defs:  # a pointer into itself (`#/properties/a` inside `a`)
                self.note(path, f"a reference Gemini can't inline ({s['$ref']!r}): sent as JSON text", True)
                out = self.json_text({k: v for k, v in s.items() if k != '$ref'}, path, stack)
                return {**out, 'nullable': True} if nullable else out
            target = {**self.defs[nm], **{k: v for k, v in s.items() if k != '$ref' and v != ''}}  # an empty description keeps the class's
            if nm not in stack: out = self.node(target, path, (*stack, nm))
            else:
                self.note(path, f'recursion: a {nm} inside a {nm}; Gemini has no references, so this one is sent as JSON text', True)
                out = self.json_text(target, path, stack)
            return {**out, 'nullable': True} if nullable else out
        out = {k: s[k] for k in _KEEP if k in s}
        if 'anyOf' in s: out['anyOf'] = [self.node(x, f'{path}/anyOf/{i}', stack) for i, x in enumerate(s['anyOf'])]
        elif 'enum' in s or 'const' in s: out = self.enum(s, out, path)
        elif (ty := s.get('type')) == 'object':
            bad = [k for k in s.get('properties') or () if not _gemini_prop.fullmatch(k)]
            if not s.get('properties') or isinstance(s.get('additionalProperties'), dict) or bad:
                why = (f"property names Gemini rejects ({', '.join(map(repr, bad))})" if bad
                       else 'an object without listed properties (a dict): Gemini needs them listed')
                self.note(path, f'{why}, so it is sent as JSON text', True)
                out = self.json_text(s, path, stack)
                return {**out, 'nullable': True} if nullable else out
            out = self.obj(s, out, path, stack)
        elif ty == 'array': out = self.arr(s, out, path, stack)
        elif ty in _TYPES: out['type'] = _TYPES[ty]
        out = self.constraints(s, out, path)
        if nullable: out['nullable'] = True
        for k in s:
            if k in out or k in _SILENT or k in self._handled: continue
            if k == 'additionalProperties' and s[k] is False: continue  # Gemini's objects hold only their listed properties
            self.note(path, f'{k!r} dropped: Gemini has no such keyword', True)
        if 'default' in out and out.get('type') == 'STRING' and not isinstance(out['default'], (str, type(None))):
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
            props[k] = self.node(v, f'{path}/properties/{esc(k)}', stack)
        out = {**out, 'type': 'OBJECT', 'properties': props}
        if req := [k for k in s.get('required', ()) if k in props]: out['required'] = req
        return out

    def arr(self, s: dict, out: dict, path: str, stack: tuple) -> dict:
        out = {**out, 'type': 'ARRAY', 'items': self.node(s.get('items') or {}, f'{path}/items', stack)}
        if (pre := s.get('prefixItems')) and any(p != pre[0] for p in pre):
            out = hint(out, 'items in order: ' + ', '.join(json.dumps(inline(p, self.defs)) for p in pre))
            self.note(path, 'a tuple of different types: Gemini has no prefixItems, so any listed type may come in any position', True)
        if s.get('uniqueItems'):
            out = hint(out, 'items are unique')
            self.note(path, 'uniqueItems moved to the description (call_func builds the set)', False)
        return out

    def constraints(self, s: dict, out: dict, path: str) -> dict:
        "String formats and number bounds Gemini can't say, turned into what it can or into the description"
        if (fmt := s.get('format')):
            if fmt == 'date-time': out['format'] = fmt
            else:
                out = hint(out, f'format: {fmt}')
                self.note(path, f"format {fmt!r} moved to the description: Gemini knows only 'date-time' (call_func still checks it)", False)
        if (enc := s.get('contentEncoding')):
            out = hint(out, f'{enc}-encoded')
            self.note(path, f'contentEncoding {enc!r} moved to the description (call_func still decodes it)', False)
        for k, bound, op in (('exclusiveMinimum', 'minimum', '>'), ('exclusiveMaximum', 'maximum', '<')):
            if k not in s: continue
            if s.get('type') == 'integer': out[bound] = s[k] + (1 if op == '>' else -1)  # the same bound for integers
            else:
                out = hint(out, f'{op} {s[k]}')
                self.note(path, f'{k} moved to the description: Gemini has only inclusive bounds', True)
        if 'multipleOf' in s:
            out = hint(out, f'a multiple of {s["multipleOf"]}')
            self.note(path, 'multipleOf moved to the description', True)
        return out

    def json_text(self, s: dict, path: str, stack: tuple) -> dict:
        "A string holding the value as JSON text: `call_func` parses it back into the dict or class"
        shape = json.dumps(inline({k: v for k, v in s.items() if k not in ('title',)}, self.defs, stack), separators=(',', ':'))
        out = hint({'type': 'STRING', **({'description': s['description']} if 'description' in s else {})}, f'JSON text matching {shape}')
        if 'default' in s: out['default'] = None if s['default'] is None else json.dumps(s['default'])
        return out


# --- JSON Schema (`FunctionDeclaration.parameters_json_schema`, `response_json_schema`) -------------------------

def _number(v) -> bool: return isinstance(v, (int, float)) and not isinstance(v, bool)

def _members(vals: list) -> tuple[list, bool]:
    "Schemas taking the values of an enum Gemini can't hold, and whether that is looser than the enum"
    plain = [v for v in vals if isinstance(v, str) or _number(v)]
    bools = {v for v in vals if isinstance(v, bool)}
    out, loose = [], False
    if plain:
        tys = {'string' if isinstance(v, str) else 'number' for v in plain}
        out.append({'enum': plain, **({'type': tys.pop()} if len(tys) == 1 else {})})
    if bools:
        out.append({'type': 'boolean'})
        loose = len(bools) == 1  # Literal[True] becomes any boolean
    if None in vals: out.append({'type': 'null'})
    for v in vals:
        if isinstance(v, (dict, list)):
            out.append({'type': 'object' if isinstance(v, dict) else 'array'})
            loose = True
    return out, loose

class Json:
    "One pass over a JSON Schema rewriting what Gemini's JSON Schema field rejects; `changes` gets `(path, what, lossy)`"
    def __init__(self, changes: list[Changed]): self.changes = changes

    def root(self, s: JsonDict) -> JsonDict:
        s = normalize({k: v for k, v in s.items() if k not in ('$schema', '$comment')})
        defs = s.get('$defs', {})
        self.bad = _required_cycles(s, defs)
        res = self.node({k: v for k, v in s.items() if k != '$defs'}, None, '')
        if defs: res['$defs'] = {k: self.node(v, k, '') for k, v in defs.items()}
        return res

    def node(self, s: Any, where: str | None, path: str) -> Any:
        "`where`: the `$defs` name this node is in (None: the root); `path`: its pointer there"
        if not isinstance(s, dict): return s
        at = f'/$defs/{esc(where)}{path}' if where else path
        if '$ref' in s:
            if s.get('description') == '': s = {k: v for k, v in s.items() if k != 'description'}  # the class's own says more
            if (where, path) in self.bad:
                nm = s['$ref'].rsplit('/', 1)[-1]
                self.changes.append((at, f'a {nm} inside a {nm} on required properties only: Gemini takes recursion only through '
                                         'optional ones, so this one is sent as JSON text', True))
                out = hint({k: s[k] for k in ('description',) if k in s} | {'type': 'string'}, f'JSON text of a {nm}')
                return out
            if [k for k in s if not k.startswith('$')]:  # `$ref` takes no siblings but `$` ones
                s = {**{k: v for k, v in s.items() if k != '$ref'}, 'anyOf': [{'$ref': s['$ref']}]}
        if 'const' in s: s = {**{k: v for k, v in s.items() if k != 'const'}, 'enum': [s['const']]}
        if 'enum' in s and not all(isinstance(v, str) or _number(v) for v in s['enum']):
            members, loose = _members(s['enum'])
            self.changes.append((at, 'enum of booleans, nulls or objects: Gemini takes enums of strings and numbers only, so sent as '
                                     + ('a union of their types' + (' (looser)' if loose else '')), loose))
            rest = {k: v for k, v in s.items() if k not in ('enum', 'type')}
            s = {**rest, **members[0]} if len(members) == 1 else {**rest, 'anyOf': members}
        out = {}
        for k, v in s.items():
            if k in ('properties', 'patternProperties', 'dependentSchemas') and isinstance(v, dict):
                out[k] = {n: self.node(x, where, f'{path}/{k}/{esc(n)}') for n, x in v.items()}
            elif k in ('anyOf', 'oneOf', 'allOf', 'prefixItems') and isinstance(v, list):
                out[k] = [self.node(x, where, f'{path}/{k}/{i}') for i, x in enumerate(v)]
            elif k in ('items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains') and isinstance(v, dict):
                out[k] = self.node(v, where, f'{path}/{k}')
            else: out[k] = v
        return out

def _required_cycles(root: dict, defs: dict) -> set:
    "Places `(def name or None, pointer)` where a `$ref` closes a cycle reached through required properties only"
    bad = set()
    def walk(s, where, path, start, optional, seen):
        if not isinstance(s, dict): return
        if isinstance(s.get('$ref'), str) and s['$ref'].startswith('#/$defs/'):
            nm = s['$ref'].rsplit('/', 1)[-1]
            if nm == start and not optional: bad.add((where, path))
            elif nm in defs and (nm, optional) not in seen:
                seen.add((nm, optional))
                walk(defs[nm], nm, '', start, optional, seen)
        req = set(s.get('required', ()))
        for n, x in (s.get('properties') or {}).items():
            walk(x, where, f'{path}/properties/{esc(n)}', start, optional or n not in req, seen)
        for k in ('anyOf', 'oneOf', 'allOf', 'prefixItems'):
            for i, x in enumerate(s.get(k) or ()): walk(x, where, f'{path}/{k}/{i}', start, optional, seen)
        if isinstance(s.get('items'), dict): walk(s['items'], where, f'{path}/items', start, optional, seen)
        if isinstance(s.get('additionalProperties'), dict): walk(s['additionalProperties'], where, f'{path}/additionalProperties', start, True, seen)
    for nm in defs: walk(defs[nm], nm, '', nm, False, set())
    return bad
