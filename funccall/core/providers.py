"""Tool schemas in each provider's own form, and `function_to_tool` (the OpenAI tool format with its own type table).

Every renderer is a pure post-pass over the canonical schema (`get_schema(f, evalable=True)`): it never
mutates its input and never asks the walker for a special case. One tool in gives one tool out; a list gives
a list, ready for the SDK call:

    client.chat.completions.create(tools=to_openai(fs, strict=True), ...)
    client.responses.create(tools=to_openai_responses(fs), ...)
    client.messages.create(tools=to_anthropic(fs, strict=True), ...)
    types.Tool(function_declarations=to_gemini(fs))            # `parameters_json_schema`; legacy=True: `parameters`
    [mcp.types.Tool.model_validate(t) for t in to_mcp(fs)]

Strict mode follows each provider's documented subset (`_strict.py` lists the rules), Gemini's two wire shapes
are in `_gemini.py`, and a render of a function describes its classes by their docstrings (`_classdocs.py`).

What a renderer had to change is recorded as `Change`s. Pass `report=Report()` to read them (and the map
of rewritten names), `report='raise'` to make a lossy change a `SchemaError`; by default a lossy change is
a `ProviderWarning`.
"""
from __future__ import annotations

import datetime as dt, inspect, re, warnings
from collections.abc import Iterator, Sequence
from typing import Any, Callable, Literal, NamedTuple, Union, overload

from ._classdocs import with_class_docs
from ._docs import class_docs, joined
from ._gemini import Json, Legacy
from ._json import MAX_NESTING, jsonable, too_deep
from ._ns import mk_ns, resolve_nm
from ._strict import ANTHROPIC, OPENAI, esc as _esc, normalize, optional_count, strict_pass, union_count
from ._types import NoneType, SchemaError, empty, fields, kind, signature, type_name
from ._warnings import SchemaWarning, caller_level, warn_undocumented
from .schema import get_schema, tool_docs
from ._typing import JsonDict, Namespace, ToolFn

__all__ = ['to_openai', 'to_openai_responses', 'to_anthropic', 'to_gemini', 'to_mcp', 'strict_schema', 'tool_name', 'provider_name', 'RENDERERS',
           'function_to_tool', 'Report', 'Change', 'ProviderWarning', 'ANTHROPIC_STRICT_LIMITS', 'tool_choice',
           'valid_name', 'unsendable', 'printable']

PROVIDERS = ('openai', 'openai_responses', 'anthropic', 'gemini', 'mcp')
# what people call them: the command line's and `Toolbox.definitions`' 'responses', the company for the model, ...
_ALIASES = {'responses': 'openai_responses', 'openai_chat': 'openai', 'chat': 'openai', 'chat_completions': 'openai',
            'claude': 'anthropic', 'google': 'gemini'}

def provider_name(
    p: str,                  # a provider as the user wrote it: 'OpenAI', 'responses', 'openai-responses', 'Claude', ...
    among: Sequence[str]=PROVIDERS,  # the names the caller can serve (another caller may add 'canonical')
) -> str:                    # its one name: 'openai', 'openai_responses', 'anthropic', 'gemini' or 'mcp'
    "The name funccall uses for provider `p`: case-insensitive, `-` or `_`, with aliases ('responses' is 'openai_responses')"
    k = str(p).strip().lower().replace('-', '_')
    k = _ALIASES.get(k, k)
    if k not in among:
        names = ', '.join(repr('responses' if n == 'openai_responses' else n) for n in among)
        raise ValueError(f"Unknown provider {str(p)[:40]!r}; use one of {names}")
    return k

class ProviderWarning(SchemaWarning):
    "A renderer changed what a tool means for a provider: a constraint, a shape or a default it can't express"

class Change(NamedTuple):
    "One thing a renderer changed in a tool"
    tool: str    # the tool's name, as funccall named it
    path: str    # where: a JSON pointer into its parameters, '' for the tool itself
    what: str    # what changed, and why
    lossy: bool  # whether the provider no longer enforces something the canonical schema says

    def __str__(self) -> str: return f"{printable(self.tool)}{self.path and ' ' + self.path}: {self.what}"

def printable(
    nm: str,           # a name, maybe a hostile server's
    width: int=80,     # at most this many characters of it
) -> str:              # `nm` with each character that isn't printable (ESC, NUL, newline, a bidi override) escaped, cut
    "A name safe to print in a warning or a log line: nothing in it moves the cursor, reorders the text or ends the line"
    s = ''.join(c if c.isprintable() else ascii(c)[1:-1] for c in str(nm)[:width])
    return s + '...' if len(str(nm)) > width else s

class Report:
    "What renderers changed: read it, `check()` it, and map rewritten tool names back with `aliases(ns)`"
    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.names: dict[str, str] = {}  # name sent to the provider -> funccall's name

    def __iter__(self) -> Iterator[Change]: return iter(self.changes)
    def __len__(self) -> int: return len(self.changes)
    def __repr__(self) -> str: return '\n'.join(map(str, self.changes)) or 'Report(no changes)'

    @property
    def lost(self) -> list[Change]:
        "The changes after which the provider no longer enforces something the schema says"
        return [c for c in self.changes if c.lossy]

    def check(self) -> None:
        "Raise `SchemaError` if a change lost meaning"
        if self.lost: raise SchemaError(_lost_msg(self.lost))

    def aliases(
        self,
        ns: Namespace,  # the namespace the tools came from, as `call_func` takes it
    ) -> dict[str, Any]:  # rewritten name -> callable, to merge into that namespace
        "Callables under the names the provider knows them by: `call_func(nm, args, {**ns, **rep.aliases(ns)})`"
        ns = mk_ns(ns)
        return {sent: resolve_nm(nm, ns) for sent, nm in self.names.items()}

def _lost_msg(lost: list) -> str:
    return 'The provider can\'t express all of these tools:\n' + '\n'.join(f'- {c}' for c in lost)

# --- tools in, tools out --------------------------------------------------------------------------------

_PARAM_KEYS = ('input_schema', 'parameters', 'inputSchema')

ToolLike = Union[ToolFn, JsonDict]  # a tool a renderer takes: a function, class, callable object or `Tool`, or a `get_schema` dict
Tools = Union[list[Any], tuple[Any, ...]]  # several of them: one request's
ReportArg = Union['Report', Literal['raise'], None]  # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn

def _canonical(t) -> dict:
    "A fresh, JSON-safe copy of a tool's canonical schema (so no renderer touches its input): given, or made from a callable"
    if isinstance(t, dict) or isinstance(getattr(t, 'schema', None), dict):  # (a callable's schema: `get_schema` checks it)
        s = t if isinstance(t, dict) else t.schema
        where = f"Tool {str(s.get('name'))[:60]!r}: its"
        # its parameters as deep as `get_schema` takes them (the tool's dict is one level more), then all of it
        params = next((v for k in _PARAM_KEYS if isinstance(v := s.get(k), dict)), None)
        if (why := too_deep(params, f'{where} input schema') or too_deep(s, f'{where} schema', MAX_NESTING + 1)): raise SchemaError(why)
    if isinstance(getattr(t, 'schema', None), dict) and not isinstance(t, dict):  # a `Tool`
        return with_class_docs(jsonable(t.schema), getattr(t, 'fn', None))  # pyright: ignore[reportArgumentType]  # (a dict's JSON form)
    if isinstance(t, dict):
        if not isinstance(t.get('name'), str): raise SchemaError(f"A tool schema needs a 'name'; got keys {sorted(t)}")
        try: return jsonable(t)  # pyright: ignore[reportReturnType]  # (a dict's JSON form is a dict; `jsonable` is unannotated)
        except TypeError as e: raise SchemaError(f"Tool {t['name']!r}: {e}; make its schema with get_schema(f, evalable=True)") from None
    if callable(t): return with_class_docs(get_schema(t, evalable=True), t)  # a fresh copy each call, defaults JSON-safe
    raise SchemaError(f"Can't make a tool of {t!r:.60}; pass a function, class, callable object or a schema from get_schema")

def _params(s: dict) -> dict:
    "The parameters object of canonical schema `s`, whatever `pname` it was made with"
    k = next((k for k in _PARAM_KEYS if k in s), None)
    k = k or next((k for k, v in s.items() if k not in ('name', 'description') and isinstance(v, dict)), None)
    return s[k] if k else {'type': 'object', 'properties': {}}

_openai_rule = ('OpenAI', re.compile(r'[a-zA-Z0-9_-]{1,64}'), re.compile(r'[^a-zA-Z0-9_-]'), 64)
# provider, as `messages` names it too -> (its name, a valid tool name, a character it rejects, longest name)
_name_rules = {
    'openai': _openai_rule, 'openai_responses': _openai_rule,
    'anthropic': ('Anthropic', re.compile(r'[a-zA-Z0-9_-]{1,128}'), _openai_rule[2], 128),  # Claude takes 128 since 2025
    # the SDK's docstring says 128, but the live API answers 400 past 64
    'gemini': ('Gemini', re.compile(r'[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}'), re.compile(r'[^a-zA-Z0-9_.:-]'), 64),
    'mcp': ('MCP', re.compile(r'[A-Za-z0-9._-]{1,128}'), re.compile(r'[^A-Za-z0-9._-]'), 128),
}

def valid_name(
    nm: str,               # a tool name
    provider: str='openai',  # 'openai', 'responses', 'anthropic', 'gemini' or 'mcp' (see `provider_name`)
) -> bool:                 # whether `provider` takes it as it is
    "Whether `provider`'s name rule accepts tool name `nm`"
    return isinstance(nm, str) and bool(_name_rules[provider_name(provider)][1].fullmatch(nm))

def unsendable(
    nm: str,   # a tool name, maybe a hostile server's
) -> str | None:  # why no provider may be sent it, even renamed; None when it may be
    "Why a tool name can't be offered at all: empty, or holding a character that isn't printable (control, format: ESC, NUL, newline, bidi)"
    if not isinstance(nm, str) or not nm: return "its name is empty"
    if not nm.isprintable(): return "its name holds characters that aren't printable (control or format: ESC, NUL, a newline, a bidi override)"
    return None

def tool_name(
    nm:str,                # a tool name, e.g. 'calc.add'
    provider:str='openai', # 'openai', 'responses' (or 'openai_responses'), 'anthropic', 'gemini' or 'mcp' (see `provider_name`)
) -> str:                  # `nm` if the provider takes it, else a valid name made from it
    "`nm` rewritten to `provider`'s name rule: dots become dashes (which `resolve_nm` reads back), other characters `_`"
    provider = provider_name(provider)
    _, ok, bad, n = _name_rules[provider]
    if ok.fullmatch(nm): return nm
    new = nm.replace('.', '-') if bad.match('.') else nm
    plain = new  # `resolve_nm` finds 'calc-add' as 'calc.add'; anything more needs the alias map
    new = bad.sub('_', new)
    if provider == 'gemini' and not re.match('[a-zA-Z_]', new): new = '_' + new  # Gemini: a letter or '_' first
    if new != plain or len(new) > n:  # characters lost or cut: a hash keeps two such names apart
        import hashlib  # (imported when first needed: not by `import funccall`)
        new = new[:n - 9] + '_' + hashlib.sha1(nm.encode()).hexdigest()[:8]
    return new

def _render(tools, provider: str, one: Callable, rename: bool, report) -> Any:
    "Render each tool with `one(schema, name, changes)`, check names, and report what changed"
    if not (report is None or report == 'raise' or isinstance(report, Report)):
        raise TypeError(f"report must be a Report, 'raise' or None, not {report!r}")
    single = not isinstance(tools, (list, tuple))
    rep = report if isinstance(report, Report) else Report()
    n0 = len(rep.changes)
    res: list[JsonDict] = []
    sent: dict[str, str] = {}
    for t in ([tools] if single else tools):
        s = _canonical(t)
        nm = _name(s['name'], provider, rename, rep)
        if nm in sent:
            raise SchemaError(f"Two tools are both named {nm!r} for {_name_rules[provider][0]} ({sent[nm]!r} and {s['name']!r}); rename one")
        sent[nm] = s['name']
        changes: list = []
        res.append(_with_options(one(s, nm, changes, t), t, provider))
        rep.changes += [Change(s['name'], *c) for c in changes]
    _finish(rep, report, n0)
    return res[0] if single else res

def _with_options(d: dict, t, provider: str) -> dict:
    "`d` with the keys a `Tool`'s `provider_options` add for `provider` (`cache_control`, `defer_loading`...)"
    opts = getattr(t, 'provider_options', None)
    if not opts or isinstance(t, dict): return d
    extra = opts.get(provider) or (opts.get('responses') if provider == 'openai_responses' else None)
    return {**d, **extra} if extra else d

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
    if lost: warnings.warn(_lost_msg(lost), ProviderWarning, stacklevel=caller_level())
    unresolved = [f'{nm!r} as {sent!r}' for sent, nm in rep.names.items() if sent != nm.replace('.', '-')]
    if unresolved:  # `resolve_nm` can't read these back: without the report the caller has no map
        warnings.warn(f"Sent {', '.join(unresolved)}: call_func finds them only through the name map; "
                      "pass report=Report() and merge report.aliases(ns) into the namespace", ProviderWarning, stacklevel=caller_level())

# --- strict mode ----------------------------------------------------------------------------------------------

def strict_schema(
    s:JsonDict,          # a parameters schema: `get_schema(f, evalable=True)['input_schema']`, or a server's
    report:Report|None=None,  # a `Report` to record what changed in
    name:str='',         # the tool's name, for messages
    provider:str='openai', # whose strict mode: 'openai' (Structured Outputs) or 'anthropic' (strict tool use)
) -> JsonDict:           # the schema under that provider's rules
    "`s` made strict for `provider`; `SchemaError` if it can't be (an open object, any value, a mixed tuple...)"
    res, notes, fails = strict_pass(s, _RULES[provider_name(provider, tuple(_RULES))])
    if fails: raise SchemaError(f"Tool {name!r} can't be strict: " + '; '.join(f"{p or 'its parameters'} {w}" for p, w in fails))
    if isinstance(report, Report): report.changes += [Change(name, p, w, False) for p, w in notes]
    return res

_RULES = {'openai': OPENAI, 'openai_responses': OPENAI, 'anthropic': ANTHROPIC}

def _strict_params(params: dict, rules, changes: list) -> tuple[dict, bool]:
    "Strict parameters, or the canonical ones with a report of why strict mode can't hold them"
    res, notes, fails = strict_pass(params, rules)
    if fails:
        why = '; '.join(f"{p or 'its parameters'} {w}" for p, w in fails)
        changes.append(('', f"can't be strict for {rules.who} ({why}): sent with strict: false", True))
        return params, False
    changes += [(p, w, False) for p, w in notes]
    return res, True

def _is_strict(t, strict) -> bool:
    "`strict` as given, or (None) the tool's own `strict` attribute"
    return bool(getattr(t, 'strict', False)) if strict is None else bool(strict)

# --- OpenAI, Anthropic, MCP --------------------------------------------------------------------------------

def _openai_fn(s: dict, nm: str, strict: bool, changes: list) -> dict:
    d = {'name': nm, 'description': s.get('description', '')}
    if strict: d['parameters'], d['strict'] = _strict_params(_params(s), OPENAI, changes)
    else: d['parameters'] = _params(s)
    return d

@overload
def to_openai(tools: Tools, strict: bool | None = None, rename: bool = False, report: ReportArg = None) -> list[JsonDict]: ...
@overload
def to_openai(tools: ToolLike, strict: bool | None = None, rename: bool = False, report: ReportArg = None) -> JsonDict: ...
def to_openai(
    tools: ToolLike | Tools,  # a function (class, callable object, `Tool`, `get_schema` dict), or a list of them
    strict:bool|None=None,  # Structured Outputs: the model's arguments always fit the schema (None: each `Tool`'s own)
    rename:bool=False,    # rewrite names OpenAI rejects (`calc.add` -> `calc-add`) instead of raising
    report:ReportArg=None,  # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
) -> JsonDict | list[JsonDict]:  # `{'type': 'function', 'function': {...}}`, or a list of them
    "Tools for OpenAI Chat Completions: `client.chat.completions.create(tools=to_openai(fs))`; a text-input `Tool` as a custom tool"
    def one(s, nm, ch, t):
        if getattr(t, 'text_input', False): return {'type': 'custom', 'custom': _custom(s, nm, t, chat=True)}
        return {'type': 'function', 'function': _openai_fn(s, nm, _is_strict(t, strict), ch)}
    return _render(tools, 'openai', one, rename, report)

def _custom(s: dict, nm: str, t, chat: bool) -> dict:
    "An OpenAI custom tool: free-form text in, plain or constrained by a grammar (Lark or a regular expression)"
    g = getattr(t, 'grammar', None)
    fmt: JsonDict
    if g is None: fmt = {'type': 'text'}
    else:
        g = {'syntax': g['syntax'], 'definition': g['definition']}
        fmt = {'type': 'grammar', 'grammar': g} if chat else {'type': 'grammar', **g}  # Chat nests the grammar; Responses doesn't
    return {'name': nm, 'description': s.get('description', ''), 'format': fmt}

@overload
def to_openai_responses(tools: Tools, strict: bool | None = None, rename: bool = False, report: ReportArg = None) -> list[JsonDict]: ...
@overload
def to_openai_responses(tools: ToolLike, strict: bool | None = None, rename: bool = False, report: ReportArg = None) -> JsonDict: ...
def to_openai_responses(
    tools: ToolLike | Tools,  # a function (class, callable object, `Tool`, `get_schema` dict), or a list of them
    strict:bool|None=None,  # Structured Outputs (None: each `Tool`'s own; the API's default is strict, so it is always sent)
    rename:bool=False,    # rewrite names OpenAI rejects instead of raising
    report:ReportArg=None,  # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
) -> JsonDict | list[JsonDict]:  # `{'type': 'function', 'name', 'description', 'parameters', 'strict'}`, or a list
    "Function tools for the OpenAI Responses API: `client.responses.create(tools=to_openai_responses(fs))`"
    def one(s, nm, ch, t):
        if getattr(t, 'text_input', False): return {'type': 'custom', **_custom(s, nm, t, chat=False)}
        d = _openai_fn(s, nm, _is_strict(t, strict), ch)
        return {'type': 'function', **d, 'strict': d.get('strict', False)}
    return _render(tools, 'openai_responses', one, rename, report)

# Claude's documented limits on one request's strict tools ("schema complexity limits")
ANTHROPIC_STRICT_LIMITS = {'tools': 20, 'optional': 24, 'unions': 16}
_LIMIT_NAMES = {'tools': 'strict tools', 'optional': 'optional parameters', 'unions': 'union parameters'}

@overload
def to_anthropic(tools: Tools, strict: bool | None = None, rename: bool = False, report: ReportArg = None) -> list[JsonDict]: ...
@overload
def to_anthropic(tools: ToolLike, strict: bool | None = None, rename: bool = False, report: ReportArg = None) -> JsonDict: ...
def to_anthropic(
    tools: ToolLike | Tools,  # a function (class, callable object, `Tool`, `get_schema` dict), or a list of them
    strict:bool|None=None,  # strict tool use: inputs always fit the schema (None: each `Tool`'s own)
    rename:bool=False,    # rewrite names Claude rejects (`calc.add` -> `calc-add`) instead of raising
    report:ReportArg=None,  # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
) -> JsonDict | list[JsonDict]:  # `{'name', 'description', 'input_schema'[, 'strict']}`, or a list of them
    "Tools for Claude: `client.messages.create(tools=to_anthropic(fs))`; a list is one request, checked against its strict limits"
    used = dict.fromkeys(ANTHROPIC_STRICT_LIMITS, 0)
    def one(s, nm, ch, t):
        d = {'name': nm, 'description': s.get('description', ''), 'input_schema': _params(s)}
        if examples := getattr(t, 'examples', None): d['input_examples'] = jsonable(examples)  # checked against the schema by `Tool`
        if not _is_strict(t, strict): return d
        params, ok = _strict_params(d['input_schema'], ANTHROPIC, ch)
        if not ok: return {**d, 'strict': False}
        need = {'tools': 1, 'optional': optional_count(params), 'unions': union_count(params)}
        over = [k for k, n in need.items() if used[k] + n > ANTHROPIC_STRICT_LIMITS[k]]
        if over:  # the request would be refused: this tool goes non-strict, the ones before it stay strict
            what = ', '.join(f"{used[k] + need[k]} {_LIMIT_NAMES[k]} (limit {ANTHROPIC_STRICT_LIMITS[k]})" for k in over)
            ch.append(('', f"sent with strict: false: with it the request's strict tools would have {what}", True))
            return {**d, 'strict': False}
        for k in used: used[k] += need[k]
        return {**d, 'input_schema': params, 'strict': True}
    return _render(tools, 'anthropic', one, rename, report)

@overload
def to_mcp(tools: Tools, rename: bool = False, report: ReportArg = None) -> list[JsonDict]: ...
@overload
def to_mcp(tools: ToolLike, rename: bool = False, report: ReportArg = None) -> JsonDict: ...
def to_mcp(
    tools: ToolLike | Tools,  # a function (class, callable object, `Tool`, `get_schema` dict), or a list of them
    rename:bool=False,    # rewrite names MCP rejects instead of raising (dots are fine)
    report:ReportArg=None,  # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
) -> JsonDict | list[JsonDict]:  # `{'name', 'description', 'inputSchema'}`, or a list: `mcp.types.Tool.model_validate` takes each
    "Tools as an MCP server lists them"
    one = lambda s, nm, ch, t: {'name': nm, 'description': s.get('description', ''), 'inputSchema': _params(s)}
    return _render(tools, 'mcp', one, rename, report)

# --- Gemini ------------------------------------------------------------------------------------------------

def _gemini_fn(s: dict, nm: str, changes: list, legacy: bool) -> dict:
    d = {'name': nm, 'description': s.get('description', '')}
    params = _params(s)
    if not params.get('properties'): return d  # a tool without parameters leaves them out (Gemini rejects an OBJECT without properties)
    if legacy:
        params = normalize(params)
        d['parameters'] = Legacy(params.get('$defs', {}), changes).node({k: v for k, v in params.items() if k != '$defs'}, '')
    else: d['parameters_json_schema'] = Json(changes).root(params)
    return d

@overload
def to_gemini(tools: Tools, rename: bool = False, report: ReportArg = None, legacy: bool = False, strict: bool | None = None) -> list[JsonDict]: ...
@overload
def to_gemini(tools: ToolLike, rename: bool = False, report: ReportArg = None, legacy: bool = False, strict: bool | None = None) -> JsonDict: ...
def to_gemini(
    tools: ToolLike | Tools,  # a function (class, callable object, `Tool`, `get_schema` dict), or a list of them
    rename:bool=False,    # rewrite names Gemini rejects instead of raising
    report:ReportArg=None,  # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
    legacy:bool=False,    # `parameters` in the OpenAPI subset, for endpoints without `parameters_json_schema`
    strict:bool|None=None,  # Gemini has no strict flag per tool: a strict tool is sent as is, with a lossy change saying so
) -> JsonDict | list[JsonDict]:  # `{'name', 'description', 'parameters_json_schema'}` (or `'parameters'`), or a list
    "Gemini function declarations: `types.Tool(function_declarations=to_gemini(fs))`; JSON Schema as it is, or the OpenAPI subset"
    def one(s, nm, ch, t):
        if _is_strict(t, strict): ch.append(('', _GEMINI_STRICT, True))
        return _gemini_fn(s, nm, ch, legacy)
    return _render(tools, 'gemini', one, rename, report)

# Gemini's constrained decoding is the request's `function_calling_config` mode VALIDATED, not a flag on the declaration
_GEMINI_STRICT = ("strict: Gemini has no strict flag per tool, so it is sent as is; for calls that fit the schema, send "
                  "tool_config=tool_choice('gemini', 'auto', tools=[...])['tool_config'] (mode VALIDATED)")

# the renderers by `provider_name`'s names: what `Toolbox.definitions` and the command line render with
RENDERERS: dict[str, Callable[..., Any]] = {'openai': to_openai, 'openai_responses': to_openai_responses, 'anthropic': to_anthropic,
                                           'gemini': to_gemini, 'mcp': to_mcp}

# --- tool_choice ----------------------------------------------------------------------------------------------

_MODES = ('auto', 'required', 'none')

def tool_choice(
    provider: str,          # 'openai', 'responses' (or 'openai_responses'), 'anthropic' or 'gemini' (see `provider_name`)
    mode: str='auto',       # 'auto' (the model decides), 'required' (it must call a tool) or 'none' (it must not)
    tools: str | ToolLike | Tools | None=None,  # only these tools: a name, a function or `Tool`, or a list of them
    parallel: bool | None=None,  # allow several calls in one turn (OpenAI, Anthropic); None: the provider's default
) -> JsonDict:              # keyword arguments for the SDK call: `create(..., **tool_choice('openai', 'required'))`
    """Which tools the model may (or must) call, in `provider`'s own terms: OpenAI `tool_choice` (a name, or
    `allowed_tools` for several), Anthropic `tool_choice` (`auto`/`any`/`none`/`tool`), Gemini `tool_config`
    (`AUTO`/`ANY`/`NONE`, `VALIDATED` for `auto` among some tools, with `allowed_function_names`)"""
    if mode not in _MODES: raise ValueError(f"mode must be one of {', '.join(map(repr, _MODES))}, not {mode!r}")
    p = provider_name(provider, ('openai', 'openai_responses', 'anthropic', 'gemini'))
    ts = None if tools is None else list(tools) if isinstance(tools, (list, tuple)) else [tools]
    names = None if ts is None else [_tool_nm(t) for t in ts]
    custom = {n for n, t in zip(names or [], ts or []) if getattr(t, 'text_input', False)}  # OpenAI names custom tools so
    if names is not None and mode == 'none': raise ValueError("mode 'none' calls no tool: pass no tools with it")
    if p == 'gemini':
        if parallel is not None: raise ValueError("Gemini has no switch for parallel calls: leave parallel=None")
        gm = {'auto': 'AUTO', 'required': 'ANY', 'none': 'NONE'}[mode]
        if names is not None and mode == 'auto': gm = 'VALIDATED'  # Gemini takes allowed names only with ANY or VALIDATED
        cfg = {'mode': gm, **({'allowed_function_names': names} if names is not None else {})}
        return {'tool_config': {'function_calling_config': cfg}}
    if p == 'anthropic':
        if names is not None and len(names) > 1:
            raise ValueError("Claude's tool_choice names one tool at most: send only the tools it may call, with mode 'required'")
        c: JsonDict = {'type': 'tool', 'name': names[0]} if names else {'type': {'auto': 'auto', 'required': 'any', 'none': 'none'}[mode]}
        if parallel is not None and c['type'] != 'none': c['disable_parallel_tool_use'] = not parallel
        return {'tool_choice': c}
    chat = p == 'openai'
    def fn(n: str) -> JsonDict:
        kind = 'custom' if n in custom else 'function'
        return {'type': kind, kind: {'name': n}} if chat else {'type': kind, 'name': n}
    oc: str | JsonDict
    if names is None: oc = mode
    elif len(names) == 1 and mode == 'required': oc = fn(names[0])
    else:
        allowed: JsonDict = {'mode': mode, 'tools': [fn(n) for n in names]}
        oc = {'type': 'allowed_tools', 'allowed_tools': allowed} if chat else {'type': 'allowed_tools', **allowed}
    return {'tool_choice': oc, **({'parallel_tool_calls': parallel} if parallel is not None else {})}

def _tool_nm(t) -> str:
    if isinstance(t, str): return t
    if isinstance(getattr(t, 'schema', None), dict): return t.name  # a `Tool`
    return get_schema(t)['name'] if callable(t) else _canonical(t)['name']

# --- function_to_tool: the OpenAI tool format, with its own type table -------------------------------------------------

_FTT_SCALARS = {bool: 'boolean', int: 'integer', float: 'number', str: 'string'}
_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

_FTT_FORMATS = {dt.datetime: {'format': 'date-time'}, dt.date: {'format': 'date'}, dt.time: {'format': 'time'},
                 bytes: {'contentEncoding': 'base64'}}  # any other custom type is a plain string

def _enum(values: list) -> dict:
    "`enum`, with a `type` when all values share one"
    tys = {('null' if v is None else _FTT_SCALARS.get(type(v))) for v in values}
    return {'type': tys.pop(), 'enum': values} if len(tys) == 1 and None not in tys else {'enum': values}

def _meta_doc(t) -> str | None:
    "The description in annotation `t`'s `Annotated` metadata: a string, or a pydantic `Field(description=...)`"
    try: meta = kind(t).meta
    except SchemaError: return None
    for m in meta:
        if isinstance(m, str): return m
        if isinstance(getattr(m, 'description', None), str): return m.description
    return None

class _ToolTable:
    "function_to_tool's type table: Optional unwrapped, unions as `oneOf`, classes inline, anything unknown a string"
    def __init__(self): self.inside = {}  # class -> JSON pointer of its schema, while inside it

    def schema(self, t, at: str) -> dict:
        try: info = kind(t)
        except SchemaError: return {'type': 'string'}  # function_to_tool's table: an unrecognised type is a string
        return _ftt_handlers[info.kind](self, info, at)

    def obj(self, info, at: str) -> dict:
        t = info.t
        if t in self.inside: return {'$ref': self.inside[t]}  # a class inside itself points at its schema above
        self.inside[t] = at
        try:
            docs = class_docs(t, t.__init__ if info.kind == 'class' else None)
            props, req = {}, []
            for f in fields(info):
                s = self.schema(f.anno, f'{at}/properties/{_esc(f.name)}')
                d = joined(docs.comments.get(f.attr) or f.doc or _meta_doc(f.anno), docs.doc_params.get(f.attr))
                props[f.name] = {**s, 'description': d} if d else s
                if f.required: req.append(f.name)
            return {'type': 'object', 'properties': props, 'required': req}
        finally: del self.inside[t]

def _ftt_union(w, info, at):
    members = [a for a in info.args if a is not NoneType and a is not None]
    if len(members) == 1: return w.schema(members[0], at)  # Optional[T] is T
    return {'oneOf': [w.schema(a, f'{at}/oneOf/{i}') for i, a in enumerate(members)]}

def _ftt_tuple(w, info, at):
    args = info.args
    if len(args) == 2 and args[1] is Ellipsis: return {'type': 'array', 'items': w.schema(args[0], f'{at}/items')}
    if not args: return {'type': 'array', 'maxItems': 0}
    return {'type': 'array', 'prefixItems': [w.schema(a, f'{at}/prefixItems/{i}') for i, a in enumerate(args)],
            'minItems': len(args), 'maxItems': len(args)}

def _ftt_format(w, info, at):
    return {'type': 'string', **_FTT_FORMATS.get(info.args[0], {})}

def _ftt_dict(w, info, at):
    return {'type': 'object', 'additionalProperties': w.schema(info.args[1] if info.args else str, f'{at}/additionalProperties')}

_string = lambda w, info, at: {'type': 'string'}
_ftt_handlers = {
    'any': _string, 'object': _string, 'none': lambda w, info, at: {'type': 'null'},
    'scalar': lambda w, info, at: {'type': _FTT_SCALARS[info.args[0]]},
    'literal': lambda w, info, at: _enum([jsonable(v) for v in info.args]),
    'enum': lambda w, info, at: _enum([jsonable(m) for m in info.t]),
    'union': _ftt_union,
    'list': lambda w, info, at: {'type': 'array', 'items': w.schema(info.args[0], f'{at}/items')},
    'set': lambda w, info, at: {'type': 'array', 'items': w.schema(info.args[0], f'{at}/items'), 'uniqueItems': True},
    'tuple': _ftt_tuple,
    'dict': _ftt_dict,
    'format': _ftt_format,
    **dict.fromkeys(('typeddict', 'namedtuple', 'dataclass', 'model', 'class'), lambda w, info, at: w.obj(info, at)),
}

def function_to_tool(
    func: ToolFn,  # a documented function (or method, class, callable object)
) -> JsonDict:  # `{'type': 'function', 'function': {'name', 'description', 'parameters'}}`
    "The OpenAI tool for `func` with its own type table: Optional unwrapped, unions as `oneOf`, classes inline, no defaults"
    where = getattr(func, '__qualname__', None) or type(func).__qualname__
    docs = tool_docs(func)
    if not docs.description and not docs.only_sections: warn_undocumented('Class' if isinstance(func, type) else 'Function', where)
    try: annotated = {nm for nm, p in inspect.signature(func).parameters.items() if p.annotation is not inspect.Parameter.empty}
    except (TypeError, ValueError): annotated = set()
    w, props, req = _ToolTable(), {}, []
    sig = signature(func, where)
    for p in sig.params:
        if p.kind in _VAR or p.name in sig.injected: continue  # an injected parameter is the application's to fill
        anno = p.anno if p.name in annotated else str  # its table: a missing annotation is a string
        s = w.schema(anno, f'#/properties/{_esc(p.name)}')
        d = joined(docs.comments.get(p.name) or _meta_doc(anno), docs.doc_params.get(p.name))
        props[p.name] = {**s, 'description': d or f"Parameter {p.name} of type {_ftt_type_name(anno)}"}
        if p.default is empty: req.append(p.name)
    name = getattr(func, '__name__', None) or type(func).__name__
    return {'type': 'function', 'function': {'name': name, 'description': docs.description,
                                             'parameters': {'type': 'object', 'properties': props, 'required': req}}}

def _ftt_type_name(t) -> str:
    try: return type_name(kind(t).t)  # `Annotated` and `NewType` wrappers off: the type the model sends
    except SchemaError: return type_name(t)
