"""What a JSON Schema fragment asks for, in words a model reads: `expected(s)`.

Every error funccall sends back to a model about a value says `expected <this>, got <that>`; this module writes the
`<this>` for a JSON Schema, in JSON's own terms (string, integer, array, object, null), so a call checked against a
Python annotation and one checked against an MCP server's schema speak with one voice:

    {'type': 'string', 'format': 'date-time'}                -> an ISO 8601 date-time string
    {'anyOf': [{'type': 'integer', 'minimum': 1}, {'type': 'null'}]} -> an integer >= 1 or null
    {'type': 'array', 'items': {'type': 'string'}}            -> an array of strings
    {'$ref': '#/$defs/Address'}                               -> an Address object (fields: street, city)

The words are bounded, whatever the schema: nesting is described three levels deep and then '...', recursive
`$ref`s end there too, an object lists the names of its fields (never their schemas), and long enums, field lists
and unions are cut short. A fragment that isn't a valid schema is described as well as it can be, never raises:
reporting a malformed schema is the validator's job.
"""
from __future__ import annotations

import json, re
from typing import Any, Callable
from urllib.parse import unquote

__all__ = ['expected']

_DEPTH = 3      # levels of nesting described before '...'
_SHOWN = 8      # enum values, fields and union members listed before the rest are counted
_VALUE = 40     # characters of one enum value shown
_TOTAL = 400    # characters of a whole description

# Words for standard (and common non-standard) string formats: (noun, what follows the noun)
_formats = {
    'date-time': ('ISO 8601 date-time string', ''), 'date': ('ISO 8601 date string', ' (YYYY-MM-DD)'),
    'time': ('ISO 8601 time string', ' (HH:MM:SS)'), 'duration': ('ISO 8601 duration string', ' (like P3DT4H)'),
    'uuid': ('UUID string', ''), 'email': ('email address', ''), 'idn-email': ('email address', ''),
    'hostname': ('hostname', ''), 'idn-hostname': ('hostname', ''), 'ipv4': ('IPv4 address string', ''),
    'ipv6': ('IPv6 address string', ''), 'uri': ('absolute URI string', ''), 'iri': ('absolute IRI string', ''),
    'uri-reference': ('URI reference string', ''), 'iri-reference': ('IRI reference string', ''), 'url': ('URL string', ''),
    'uri-template': ('URI template string', ''), 'json-pointer': ('JSON Pointer string', ''),
    'relative-json-pointer': ('relative JSON Pointer string', ''), 'regex': ('regular expression string', ''),
    'byte': ('base64-encoded string', ''), 'binary': ('binary string', ''), 'decimal': ('decimal number string', ''),
    'Path': ('file path string', ''),
}
_ANNOTATIONS = frozenset(('title', 'description', 'default', 'examples', 'example', '$comment', 'deprecated', 'readOnly',
                          'writeOnly', '$schema', '$id', '$anchor', '$dynamicAnchor', '$vocabulary', '$defs', 'definitions',
                          'nullable', 'discriminator', 'contentMediaType', 'contentSchema', 'x-order'))
_OBJECT_KW = ('properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'maxProperties', 'propertyNames')
_ARRAY_KW = ('items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'additionalItems')
_STRING_KW = ('minLength', 'maxLength', 'pattern', 'format', 'contentEncoding')
_NUMBER_KW = ('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf')
_TYPE_ORDER = ('object', 'array', 'string', 'integer', 'number', 'boolean', 'null')

def expected(
    s,                 # a JSON Schema fragment (a dict, or `True`/`False`)
    defs: dict | Callable | None = None,  # the root `$defs` (name -> schema), or a function from a `$ref` string to its schema or None
) -> str:              # what `s` accepts, for a model: 'an array of integers', "one of 'a', 'b', or null"
    "What schema `s` accepts, in JSON terms a model understands; bounded in length and depth"
    resolve = defs if callable(defs) else _defs_resolver(defs or {})
    try: text = _Describer(resolve).desc(s, 0)[0]
    except RecursionError: text = 'a value of a schema too deep to describe'  # unreachable with _DEPTH; a guard all the same
    return text if len(text) <= _TOTAL else text[:_TOTAL - 3] + '...'

# --- resolving $ref ---------------------------------------------------------------------------------------

def _unescape(seg: str) -> str:
    return unquote(seg).replace('~1', '/').replace('~0', '~')

def _defs_resolver(defs: dict) -> Callable:
    "A `$ref` resolver over a root `$defs` dict: `#/$defs/Name/...` or `#/definitions/Name/...`"
    def resolve(ref: str):
        parts = [_unescape(p) for p in ref.split('/')] if ref.startswith('#/') else []
        if len(parts) < 3 or parts[1] not in ('$defs', 'definitions'): return None
        node = defs.get(parts[2]) if isinstance(defs, dict) else None
        for p in parts[3:]:
            if isinstance(node, dict): node = node.get(p)
            elif isinstance(node, list) and p.isdigit() and int(p) < len(node): node = node[int(p)]
            else: return None
        return node
    return resolve

def _ref_name(ref: str) -> str | None:
    "The definition's name a `$ref` points at (`#/$defs/Address` -> 'Address'), or None"
    parts = ref.split('/')
    return _unescape(parts[-1]) if len(parts) >= 2 and parts[-2] in ('$defs', 'definitions') and parts[-1] else None

# --- words ------------------------------------------------------------------------------------------------

def _a(phrase: str) -> str:
    "`phrase` with its indefinite article"
    first = phrase[:1].lower()
    vowel = first in 'aeio' or (first == 'u' and not phrase.lower().startswith(('uu', 'uri', 'url', 'uni', 'use', 'usu')))
    return f"{'an' if vowel else 'a'} {phrase}"

def _n(k, word: str) -> str: return f"{k} {word}{'' if k == 1 else 's'}"

def _count(v) -> int | None:
    "A length bound as an int: JSON Schema's integers include `2.0`, which the validator applies too; None for anything else"
    if type(v) is float and v.is_integer() and v >= 0: return int(v)
    return v if type(v) is int and v >= 0 else None

def _value(v) -> str:
    "A JSON value as a model would write it, cut short"
    if v is None: return 'null'
    if v is True or v is False: return 'true' if v else 'false'
    if isinstance(v, str): r = repr(v)
    elif isinstance(v, (int, float)): r = repr(v)
    else:
        try: r = json.dumps(v, separators=(', ', ': '), default=repr)
        except (ValueError, TypeError, RecursionError): r = f'<{type(v).__name__}>'
    return r if len(r) <= _VALUE else r[:_VALUE - 3] + '...'

def _listed(items: list, total: int | None = None) -> str:
    "'a, b, c', or 'a, b, ... (12 in all)' past `_SHOWN`"
    total = len(items) if total is None else total
    shown = ', '.join(items[:_SHOWN])
    return shown if total <= _SHOWN else f"{shown}, ... ({total} in all)"

def _one_of(values: list) -> str:
    "The words for an enum"
    vals = [v for v in values if v is not None]
    null = len(vals) < len(values)
    if not vals: return 'null'
    if len(vals) == 1: return f"exactly {_value(vals[0])}" + (' or null' if null else '')
    return f"one of {_listed([_value(v) for v in vals[:_SHOWN]], len(vals))}" + (', or null' if null else '')

_parenthesized = re.compile(r'\([^()]*\)')

def _join_or(parts: list) -> str:
    "'X or Y', 'X, Y, or Z'; a comma before 'or' when a part has commas or 'of' of its own, so it reads unambiguously"
    if len(parts) == 1: return parts[0]
    first = _parenthesized.sub('', parts[0])  # commas inside '(fields: a, b)' are closed off: they don't blur the 'or'
    if len(parts) == 2 and ',' not in first and ' of ' not in first: return f"{parts[0]} or {parts[1]}"
    return f"{', '.join(parts[:-1])}, or {parts[-1]}"

class _Describer:
    "Describes schemas as (singular with article, plural or None when the words have no noun to pluralise)"
    def __init__(self, resolve: Callable): self.resolve = resolve

    def desc(self, s, depth: int, nm: str | None = None) -> tuple[str, str | None]:
        if depth > _DEPTH: return '...', '...'
        if s is True or s is None: return 'any JSON value', 'any JSON values'
        if s is False: return 'no value at all (nothing is allowed here)', None
        if not isinstance(s, dict): return 'any JSON value', 'any JSON values'
        if isinstance(ref := s.get('$ref'), str):
            try: target = self.resolve(ref)
            except Exception: target = None  # a resolver's failure is the validator's to report; words go on
            rnm = _ref_name(ref)
            if target is None:
                return (_a(f'{rnm} value'), f'{rnm} values') if rnm else ('a value of the referenced schema', None)
            if target is not s: return self.desc(target, depth + 1, rnm or nm)
        if 'enum' in s and isinstance(s['enum'], list): return _one_of(s['enum']), None
        if 'const' in s: return _one_of([s['const']]), None
        if isinstance(t := s.get('type'), list):
            ts = sorted({x for x in t if isinstance(x, str)}, key=lambda x: _TYPE_ORDER.index(x) if x in _TYPE_ORDER else 99)
            if not ts: return 'any JSON value', 'any JSON values'
            return self.union([{**s, 'type': x} for x in ts], depth, nm)
        for kw in ('anyOf', 'oneOf'):
            if isinstance(ms := s.get(kw), list) and ms and not self.has_type(s): return self.union(ms, depth, nm)
        if isinstance(ms := s.get('allOf'), list) and ms and not self.has_type(s):
            if len(ms) == 1: return self.desc(ms[0], depth + 1, nm)
            return f"a value that is all of: {'; '.join(self.desc(m, depth + 1)[0] for m in ms[:_SHOWN])}", None
        if 'not' in s and not self.has_type(s): return f"anything but {self.desc(s['not'], depth + 1)[0]}", None
        return self.typed(s, self.type_of(s), depth, nm)

    @staticmethod
    def has_type(s: dict) -> bool: return isinstance(s.get('type'), str) or any(k in s for k in _OBJECT_KW + _ARRAY_KW + _STRING_KW + _NUMBER_KW)

    @staticmethod
    def type_of(s: dict) -> str | None:
        "The type `s` declares, or the one its keywords imply"
        if isinstance(t := s.get('type'), str): return t
        for kws, t in ((_OBJECT_KW, 'object'), (_ARRAY_KW, 'array'), (_STRING_KW, 'string'), (_NUMBER_KW, 'number')):
            if any(k in s for k in kws): return t
        return None

    def union(self, members: list, depth: int, nm: str | None = None) -> tuple[str, str | None]:
        flat: list[Any]
        values: list
        flat, null, values = [], False, []
        for m in members:
            if isinstance(m, dict) and (m.get('type') == 'null' or m.get('enum') == [None] or ('const' in m and m['const'] is None)): null = True
            elif isinstance(m, dict) and isinstance(m.get('enum'), list): values += m['enum']; flat.append(None)
            elif isinstance(m, dict) and 'const' in m: values.append(m['const']); flat.append(None)
            else: flat.append(m)
        if flat and all(m is None for m in flat): return _one_of(values + [None] * null), None  # enums and null: one list
        flat = [m for m in flat if m is not None]
        if values: flat.append({'enum': values})
        if not flat: return 'null', None
        ds = [self.desc(m, depth + 1, nm if len(flat) == 1 else None) for m in flat[:_SHOWN]]
        sing = [d[0] for d in ds] + (['null'] if null else [])
        plural = None if null or any(d[1] is None for d in ds) or len(flat) > _SHOWN else _join_or([d[1] for d in ds])
        if len(flat) > _SHOWN: return f"one of {len(flat) + null} forms: {', '.join(sing)}, ...", None
        return _join_or(sing), plural

    def typed(self, s: dict, t: str | None, depth: int, nm: str | None) -> tuple[str, str | None]:
        if t == 'string': return self.string(s)
        if t in ('integer', 'number'): return self.number(s, t)
        if t == 'boolean': return 'a boolean', 'booleans'
        if t == 'null': return 'null', None
        if t == 'array': return self.array(s, depth)
        if t == 'object': return self.object(s, depth, nm)
        return 'any JSON value', 'any JSON values'

    @staticmethod
    def noun(pre: str, noun: str, post: str) -> tuple[str, str]: return _a(f'{pre}{noun}{post}'), f'{pre}{noun}s{post}'

    def string(self, s: dict) -> tuple[str, str]:
        noun, post = _formats.get(s.get('format'), ('string', ''))  # type: ignore[arg-type]  # (None: no format, the default)
        if noun == 'string' and isinstance(f := s.get('format'), str): post = f" in format {f[:_VALUE]!r}"
        if noun == 'string' and s.get('contentEncoding') == 'base64': noun = 'base64-encoded string'
        lo, hi = _count(s.get('minLength')) or None, _count(s.get('maxLength'))
        if lo is not None and hi is not None: post += f" of exactly {_n(lo, 'character')}" if lo == hi else f" of {lo} to {_n(hi, 'character')}"
        elif lo is not None: post += f" of at least {_n(lo, 'character')}"
        elif hi is not None: post += f" of at most {_n(hi, 'character')}"
        if isinstance(p := s.get('pattern'), str): post += f" matching the pattern {_value(p)}"
        return self.noun('', noun, post)

    def number(self, s: dict, t: str) -> tuple[str, str]:
        num = lambda k: s[k] if isinstance(s.get(k), (int, float)) and not isinstance(s.get(k), bool) else None
        bounds = []
        if (x := num('exclusiveMinimum')) is not None: bounds.append(f'> {x}')
        elif (x := num('minimum')) is not None: bounds.append(f"{'>' if s.get('exclusiveMinimum') is True else '>='} {x}")
        if (x := num('exclusiveMaximum')) is not None: bounds.append(f'< {x}')
        elif (x := num('maximum')) is not None: bounds.append(f"{'<' if s.get('exclusiveMaximum') is True else '<='} {x}")
        if (x := num('multipleOf')) is not None and x > 0: bounds.append(f'a multiple of {x}')
        return self.noun('', t, f" {' and '.join(bounds)}" if bounds else '')

    def array(self, s: dict, depth: int) -> tuple[str, str]:
        prefix, rest = s.get('prefixItems'), s.get('items')
        if not isinstance(prefix, list):
            prefix, rest = (rest, s.get('additionalItems')) if isinstance(rest, list) else (None, rest)
        lo, hi = _count(s.get('minItems')) or None, _count(s.get('maxItems'))
        notes = ['no duplicates'] if s.get('uniqueItems') is True else []
        pre = ''
        if prefix:
            k = len(prefix)
            shown = ', '.join(self.desc(m, depth + 1)[0] for m in prefix[:_SHOWN]) + (', ...' if k > _SHOWN else '')
            if rest is False or hi == k: post = f" of {_n(k, 'item')}: {shown}"
            elif rest is None or rest is True or rest == {}: post = f" starting with {_n(k, 'item')}: {shown}"
            else: post = f" starting with {_n(k, 'item')}: {shown}; then {self.items(rest, depth)}"
            return self.noun('', 'array', post + (f" ({', '.join(notes)})" if notes else ''))
        if rest is False: return self.noun('empty ', 'array', '')
        if lo is not None and hi is not None: notes.insert(0, f"exactly {_n(lo, 'item')}" if lo == hi else f"{lo} to {hi} items")
        elif lo == 1: pre = 'non-empty '
        elif lo is not None: notes.insert(0, f"at least {lo} items")
        elif hi is not None: notes.insert(0, f"at most {_n(hi, 'item')}")
        post = '' if rest is None or rest is True or rest == {} else f" {self.items(rest, depth)}"
        return self.noun(pre, 'array', post + (f" ({', '.join(notes)})" if notes else ''))

    def items(self, s, depth: int, whose: str = 'items') -> str:
        "'of integers', or 'whose items are each one of ...' when the words have no plural"
        sing, plural = self.desc(s, depth + 1)
        return f"of {plural}" if plural else f"whose {whose} are each {sing}"

    def object(self, s: dict, depth: int, nm: str | None) -> tuple[str, str]:
        title = nm if nm else s.get('title') if isinstance(s.get('title'), str) and s.get('title').strip() else None  # type: ignore[union-attr]
        noun = f"{title.strip()[:_VALUE]} object" if title else 'object'
        props = s.get('properties') if isinstance(s.get('properties'), dict) else {}
        req = [r for r in s.get('required', []) if isinstance(r, str)] if isinstance(s.get('required'), list) else []
        extra = s.get('additionalProperties')
        if props:
            post = f" (fields: {_listed(list(props)[:_SHOWN], len(props))}"
            if req and set(req) != set(props): post += f"; required: {_listed(req[:_SHOWN], len(req))}"
            return self.noun('', noun, post + ')')
        if req: return self.noun('', noun, f" with keys: {_listed(req[:_SHOWN], len(req))}")
        if extra is False and not s.get('patternProperties'): return self.noun('empty ', noun, '')
        if isinstance(extra, dict) and extra: return self.noun('', noun, f" {self.items(extra, depth, 'values')}")
        return self.noun('', noun, '')
