"""Call expressions: a model writes `add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))` instead of JSON.

Parsed with `ast`, never `eval`. What an expression may contain:
- literals: numbers (with a sign), strings, bytes, `True`/`False`/`None`, lists, tuples, dicts, sets;
- names from the context you pass (`x`, `Point`, or a dotted key such as `'np.array'`), and calls to the
  context's callables (constructors such as `Point(x=1, y=2)`);
- at the top, one call to a tool, or a list (or tuple) of them.
Anything else (operators, attribute access the context doesn't name, comprehensions, lambdas, names starting
with `__`) is refused with an `ExprError` that says what and where.
"""
from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from typing import Any, Literal, NamedTuple, NoReturn, overload

from ._inputs import ToolInputError, short
from ._ns import ToolNotFound

__all__ = ['ExprError', 'ExprCall', 'parse_calls']

MAX_LEN = 100_000  # characters: a model's expression is a line or a few, not a data file

class ExprError(ToolInputError):
    "A call expression from the model that can't be run: bad syntax or something it may not contain"

class _UnknownTool(ExprError, ToolNotFound):
    "A call expression's tool that is not offered: the model's name is wrong (`ToolNotFound`), so the expression can't run (`ExprError`)"
    def __init__(self, nm: str, available: list[str], message: str):
        ToolNotFound.__init__(self, nm, available)  # `name` and `available`
        ExprError.__init__(self, message)           # the message, saying where

class ExprCall(NamedTuple):
    name: str       # the tool's name
    args: tuple[Any, ...]  # positional arguments, already Python values
    kwargs: dict[str, Any]  # keyword arguments, already Python values
    text: str       # the call's own source text, for reports

def _dotted(node) -> str | None:
    "`a.b.c` for a chain of attribute accesses on a name, else None"
    parts = []
    while isinstance(node, ast.Attribute): parts.append(node.attr); node = node.value
    if not isinstance(node, ast.Name): return None
    return '.'.join([node.id, *reversed(parts)])

class _Values:
    "Turns the argument nodes of an expression into Python values, allowing only literals and the context"
    def __init__(self, src: str, context: Mapping):
        self.src, self.context = src, context
        self.starts = [0]  # offset of each line, so a node's text is a slice (`ast.get_source_segment` rescans from the top)
        for line in src.splitlines(True): self.starts.append(self.starts[-1] + len(line))

    def segment(self, node) -> str:
        try: return self.src[self.starts[node.lineno - 1] + node.col_offset:self.starts[node.end_lineno - 1] + node.end_col_offset]
        except (AttributeError, IndexError, TypeError): return type(node).__name__

    def where(self, node, why: str) -> str: return f"{why}: {self.segment(node)[:80]!r} (column {getattr(node, 'col_offset', 0) + 1})"

    def fail(self, node, why: str) -> NoReturn: raise ExprError(self.where(node, why))

    def name(self, node, run: bool = True) -> Any:
        nm = _dotted(node)
        if nm is None: self.fail(node, "Only names and dotted names from the context can be used")
        if any(p.startswith('__') for p in nm.split('.')): self.fail(node, "Dunder names are not allowed")
        if nm not in self.context: self.fail(node, f"Unknown name {short(nm, 60)}; the names you can use are {sorted(self.context)[:20]}")
        return self.context[nm] if run else None

    def value(self, node, run: bool = True) -> Any:
        "The value of `node`; with `run=False` only check it may be evaluated, calling nothing"
        if isinstance(node, ast.Constant): return node.value
        if isinstance(node, (ast.Name, ast.Attribute)): return self.name(node, run)
        if isinstance(node, ast.List): return [self.value(x, run) for x in node.elts]
        if isinstance(node, ast.Tuple): return tuple(self.value(x, run) for x in node.elts)
        if isinstance(node, ast.Set):
            items = [self.value(x, run) for x in node.elts]
            return self.hashed(node, lambda: set(items)) if run else items
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys): self.fail(node, "`**` unpacking is not allowed")
            pairs = [(self.value(k, run), self.value(v, run)) for k, v in zip(node.keys, node.values)]
            return self.hashed(node, lambda: dict(pairs)) if run else pairs
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant) \
                and type(node.operand.value) in (int, float, complex):
            return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value  # type: ignore[operator]  # (a number: tested above)
        if isinstance(node, ast.Call):
            fn = self.name(node.func, run)
            if run and not callable(fn): self.fail(node.func, "This context name is not callable")
            args, kwargs = self.arguments(node, run)
            if not run: return None
            try: return fn(*args, **kwargs)
            except Exception as e: self.fail(node, f"Building this value failed ({type(e).__name__}: {e})")
        self.fail(node, f"{type(node).__name__} is not allowed in a call expression")

    def hashed(self, node, make):
        try: return make()
        except TypeError as e: self.fail(node, f"A set item or dict key must be a constant ({e})")

    def arguments(self, node: ast.Call, run: bool = True) -> tuple[tuple, dict]:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            self.fail(node, "`*` and `**` unpacking are not allowed")
        names = [k.arg for k in node.keywords]
        if len(set(names)) < len(names):
            self.fail(node, f"Keyword argument {next(n for n in names if names.count(n) > 1)!r} is given twice")
        return tuple(self.value(a, run) for a in node.args), {k.arg: self.value(k.value, run) for k in node.keywords}

def _tool_name(nm: str | None, tools) -> str | None:
    "The tool a call names: `group.method` finds the tool `group-method`, since `-` can't be written in a call"
    if nm is None: return None
    if nm in tools: return nm
    dashed = nm.replace('.', '-')
    return dashed if dashed in tools else None

@overload
def parse_calls(text: str, tools: Collection[str], context: Mapping[str, Any] | None = None,
                errors: Literal['raise'] = 'raise') -> list[ExprCall]: ...
@overload
def parse_calls(text: str, tools: Collection[str], context: Mapping[str, Any] | None = None, *,
                errors: Literal['return']) -> list[ExprCall | ExprError]: ...
@overload
def parse_calls(text: str, tools: Collection[str], context: Mapping[str, Any] | None,
                errors: Literal['return']) -> list[ExprCall | ExprError]: ...
def parse_calls(
    text: str,            # one call expression, or a list of them: `[add(a=1, b=2), search(query="x")]`
    tools: Collection[str],  # the tool names that may be called at the top (any container of names)
    context: Mapping[str, Any] | None=None,  # names the arguments may use: constants, classes, dotted keys like 'np.array'
    errors: str='raise',  # 'raise' on the first bad call, or 'return' an `ExprError` in the place of each bad call
) -> list[Any]:          # the calls (`ExprCall`), in order, with their arguments as Python values; each bad one an `ExprError` with 'return'
    "Parse a model's call expression(s) safely, building argument values from literals and `context` only"
    if not isinstance(text, str): raise ExprError(f"A call expression must be a string, got {type(text).__name__}")
    if len(text) > MAX_LEN: raise ExprError(f"The call expression is {len(text)} characters long; the limit is {MAX_LEN}")
    src = text.strip()
    if not src: raise ExprError("The call expression is empty; write a tool call like `name(arg=value)`")
    try: tree = ast.parse(src, mode='eval')
    except SyntaxError as e: raise ExprError(f"Not a valid call expression: {e.msg} (line {e.lineno}, column {e.offset})") from None
    except (RecursionError, MemoryError): raise ExprError("The call expression is nested too deeply") from None
    except ValueError as e: raise ExprError(f"Not a valid call expression: {e}") from None  # e.g. a lone surrogate
    vals = _Values(src, context or {})
    body = tree.body
    nodes = body.elts if isinstance(body, (ast.List, ast.Tuple)) else [body]
    checked = [_check(vals, node, tools) for node in nodes]  # everything is checked before anything of the context runs
    if errors == 'raise' and (bad := next((c for c in checked if isinstance(c, ExprError)), None)): raise bad
    res: list[ExprCall | ExprError] = []
    for node, c in zip(nodes, checked):
        if not isinstance(c, ExprError):
            try: c = ExprCall(c, *vals.arguments(node), vals.segment(node))  # type: ignore[arg-type]  # (a call: `_check` said so)
            except ExprError as e: c = e
            except RecursionError: c = ExprError("The call expression is nested too deeply")
            if errors == 'raise' and isinstance(c, ExprError): raise c
        res.append(c)
    return res

def _unknown(vals: _Values, node, tools) -> _UnknownTool:
    "The error for a call of `node`, which names no tool: the tools' exact names (or `group.method` for `group-method`) only"
    asked = _dotted(node) or vals.segment(node)
    return _UnknownTool(asked, sorted(tools), vals.where(node, f"Unknown tool {short(asked, 80)}; the tools are {sorted(tools)[:20]}"))

def _check(vals: _Values, node, tools):
    "The tool name of a top-level call, once its arguments are known to be safe to evaluate; else the `ExprError`"
    try:
        if not isinstance(node, ast.Call): vals.fail(node, "Expected a tool call like `name(arg=value)`")
        nm = _tool_name(_dotted(node.func), tools)
        if nm is None: return _unknown(vals, node.func, tools)
        vals.arguments(node, run=False)
        return nm
    except ExprError as e: return e
    except RecursionError: return ExprError("The call expression is nested too deeply")
