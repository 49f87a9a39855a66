"""Injected parameters: never in a schema or a definition, whatever builds it, and never filled by the model.

One table attacks every path that describes a tool (get_schema, each render, `Tool`, `Toolbox`, `function_to_tool`, code
mode's API, the MCP server's tool list, the command line) with every way a parameter becomes injected: annotated
`MCPContext` (as a class, a string, `Optional`, `Annotated`), named in `inject=`, or annotated with a context type the
application registered in `injected_types`. A second table sends the model's value for that parameter down every path
that runs a call, and checks the call is refused and the tool never sees it; its control runs the same path without it.
"""
import asyncio, functools, json
from typing import Annotated, Any, Optional

import pytest

pytest.importorskip('mcp')
from mcp import Client  # noqa: E402

from funccall import (  # noqa: E402
    Tool, ToolInputError, Toolbox, call_func, coerce_inputs, function_to_tool, get_schema, get_schema_nm, injected_types,
    run_tool_calls, to_anthropic, to_gemini, to_mcp, to_openai, to_openai_responses
)
from funccall.cli import main  # noqa: E402
from funccall.core._types import signature  # noqa: E402
from funccall.mcp import MCPContext, context_params, mk_server  # noqa: E402
from funccall.toolsets.codemode import code_api  # noqa: E402

T = 20
P = 'injected_ctx'  # the injected parameter's name: it must appear in no output, anywhere
HIDDEN = (P, 'MCPContext', 'RunContext')  # nor its type's name (a `$defs` entry, a description's type)
SEEN = []  # what each run of a tool got for its injected parameter
APP, MODEL = object(), 'FROM_THE_MODEL'

class RunContext:
    "The application's own context type, registered in `injected_types` for this module's tests"

class SubContext(RunContext):
    "A subclass of a registered context type: injected too"

def k_annotation(path: str, injected_ctx: MCPContext) -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

def k_string(path: str, injected_ctx: 'MCPContext') -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

def k_optional(path: str, injected_ctx: Optional[MCPContext] = None) -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

def k_annotated(path: str, injected_ctx: Annotated[MCPContext, 'the call']) -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

async def k_async(injected_ctx: MCPContext, path: str) -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

def k_name(path: str, injected_ctx: Any) -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

def k_context(path: str, injected_ctx: RunContext) -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

def k_subclass(path: str, *, injected_ctx: Optional[SubContext] = None) -> str:  # the new name
    "Rename a file"
    SEEN.append(injected_ctx)
    return path

KINDS = {'annotation': k_annotation, 'string': k_string, 'optional': k_optional, 'annotated': k_annotated, 'async': k_async,
         'inject=': k_name, 'context type': k_context, 'context subclass': k_subclass}
MCP_KINDS = ('annotation', 'string', 'optional', 'annotated', 'async')  # the server hands these an `MCPContext` itself

@pytest.fixture(autouse=True)
def registered():
    "`RunContext` registered as the application's context type, for each test, and the registry as it was afterwards"
    before = set(injected_types)
    injected_types.add(RunContext)
    SEEN.clear()
    yield
    injected_types.intersection_update(before)

def subject(kind: str):
    "What a path is given: the function, or for `inject=` the `Tool` naming the parameter"
    f = KINDS[kind]
    return Tool(f, inject=P) if kind == 'inject=' else f

def injected(kind: str) -> dict:
    "The application's value for the parameter, as each request passes it"
    return {P: MCPContext() if kind in MCP_KINDS else APP}

def hidden(out) -> None:
    "The injected parameter and its type are nowhere in `out`"
    text = json.dumps(out, default=str)
    for w in HIDDEN: assert w not in text, (w, text[:600])
    assert 'path' in text, text[:600]  # (and the model's own parameter is there: the output is the tool's)

async def listed(kind: str) -> list:
    "The MCP server's tool list, through the SDK's client"
    srv = mk_server([subject(kind)], injected={} if kind in MCP_KINDS else injected(kind))
    async with Client(srv) as c: return [t.model_dump(mode='json') for t in (await c.list_tools()).tools]

def _schema(s):
    return get_schema(KINDS['inject='], inject=P) if s is KINDS['inject='] or isinstance(s, Tool) and s.fn is KINDS['inject='] \
        else get_schema(s)

PATHS = {
    'get_schema': _schema,
    'get_schema(Tool)': lambda s: get_schema(s if isinstance(s, Tool) else Tool(s)),
    'get_schema_nm': lambda s: get_schema_nm('k', {'k': s if isinstance(s, Tool) else Tool(s)}),
    'Tool.schema': lambda s: (s if isinstance(s, Tool) else Tool(s)).schema,
    'Tool.to_dict': lambda s: (s if isinstance(s, Tool) else Tool(s)).to_dict(),
    'to_openai': to_openai, 'to_openai strict': lambda s: to_openai(s, strict=True),
    'to_openai_responses': to_openai_responses, 'to_anthropic': to_anthropic,
    'to_anthropic strict': lambda s: to_anthropic(s, strict=True),
    'to_gemini': to_gemini, 'to_gemini legacy': lambda s: to_gemini(s, legacy=True), 'to_mcp': to_mcp,
    'function_to_tool': function_to_tool,
    **{f'Toolbox.definitions {fmt}': functools.partial(lambda fmt, s: Toolbox([s]).definitions(fmt), fmt)
       for fmt in ('canonical', 'openai', 'responses', 'anthropic', 'gemini', 'mcp')},
    'Toolbox.definitions strict': lambda s: Toolbox([s]).definitions('anthropic', strict=True),
    'Tool.definition': lambda s: Tool(s).definition('responses') if not isinstance(s, Tool) else s.definition('responses'),
    'Toolbox.as_json': lambda s: json.loads(Toolbox([s]).as_json()),
    'code mode API': lambda s: code_api(Toolbox([s])),
    'MCP server tool list': None,  # below: the kind decides what the server is given
}

@pytest.mark.parametrize('kind', list(KINDS))
@pytest.mark.parametrize('path', list(PATHS))
def test_an_injected_parameter_is_in_no_schema(path, kind):
    s = subject(kind)
    out = asyncio.run(asyncio.wait_for(listed(kind), T)) if path == 'MCP server tool list' else PATHS[path](s)
    hidden(out)

def test_what_each_kind_injects_is_found_by_signature_alone():
    "The one place that decides: `signature(f).injected`; `inject=` names are the caller's own, and an unregistered type is none"
    for kind, f in KINDS.items(): assert signature(f).injected == (() if kind == 'inject=' else (P,)), kind
    injected_types.discard(RunContext)
    assert signature(k_context).injected == () and signature(k_subclass).injected == ()
    assert P in get_schema(k_context)['input_schema']['properties']  # unregistered, it is the model's again: the cache forgot
    injected_types.add(RunContext)
    assert P not in get_schema(k_context)['input_schema']['properties']

def test_the_server_injects_a_context_for_each_mcp_spelling():
    for kind in MCP_KINDS: assert context_params(KINDS[kind]) == [P], kind
    assert context_params(k_context) == [] and context_params(k_name) == []

# --- the model's value for an injected parameter: refused on every path that runs a call ---------------------------------

def _response(args: dict) -> dict:
    return {'choices': [{'message': {'role': 'assistant', 'tool_calls': [
        {'id': 'c1', 'type': 'function', 'function': {'name': 'k', 'arguments': json.dumps(args)}}]}}]}

def _text(r) -> str:
    "A result's text whatever its shape (a `ToolResult`, a list of them, a message, a server's result)"
    if isinstance(r, list): return ' '.join(map(_text, r))
    return getattr(r, 'error', None) or getattr(r, 'text', None) or json.dumps(r, default=str)

def _tool(kind, **kw) -> Tool:
    "The kind's function as a tool named 'k': only `inject=` names the parameter; the others' annotation alone injects it"
    return Tool(KINDS[kind], name='k', inject=P if kind == 'inject=' else (), **kw)

def _box(kind, inj=None) -> Toolbox: return Toolbox([_tool(kind)], injected=inj)

async def _served(kind, args: dict):
    srv = mk_server({'k': KINDS[kind]} if kind != 'inject=' else [_tool(kind)], injected={} if kind in MCP_KINDS else injected(kind))
    async with Client(srv) as c:
        r = await c.call_tool('k', args)
        return ' '.join(getattr(x, 'text', '') for x in r.content) if r.is_error else 'ok'

def _hooked(kind, args):
    "A pre-hook that adds the parameter itself: the model's arguments changed on the way are checked as the model's"
    hook = (lambda t, a: {**a, P: MODEL}) if args.get(P) == MODEL else None
    return _tool(kind, pre_hook=hook).execute({'path': 'a'}, injected(kind))

def _middleware(kind, args):
    "A middleware that calls on with the parameter added: checked, refused"
    mw = (lambda t, a, call_next: call_next({**a, P: MODEL})) if args.get(P) == MODEL else (lambda t, a, call_next: call_next(a))
    return _tool(kind, middleware=(mw,)).execute({'path': 'a'}, injected(kind))

CALLS = {
    'Tool.execute': lambda kind, a: _box(kind)['k'].execute(a, injected(kind)),
    'Tool.aexecute': lambda kind, a: asyncio.run(_box(kind)['k'].aexecute(a, injected(kind))),
    'Toolbox.call': lambda kind, a: _box(kind).call('k', a, injected=injected(kind)),
    'Toolbox.call, the toolbox holding the value': lambda kind, a: _box(kind, injected(kind)).call('k', json.dumps(a)),
    'Toolbox.acall': lambda kind, a: asyncio.run(_box(kind).acall('k', a, injected=injected(kind))),
    'Toolbox.batch': lambda kind, a: _box(kind).batch([('k', a), ('k', a)], injected=injected(kind)),
    'Toolbox.abatch': lambda kind, a: asyncio.run(_box(kind).abatch([('k', a)], injected=injected(kind))),
    'Toolbox.call_expr': lambda kind, a: _box(kind).call_expr(
        f"k(path='a'{', injected_ctx=' + repr(MODEL) if P in a else ''})", injected=injected(kind)),
    'call_func(name, toolbox)': lambda kind, a: call_func('k', a, _box(kind, injected(kind)), raise_on_err=False),
    'run_tool_calls': lambda kind, a: run_tool_calls(_box(kind), _response(a), injected=injected(kind)),
    'pre_hook': _hooked,
    'middleware': _middleware,
    'MCP server': lambda kind, a: asyncio.run(asyncio.wait_for(_served(kind, a), T)),
}

@pytest.mark.parametrize('kind', list(KINDS))
@pytest.mark.parametrize('path', list(CALLS))
def test_the_models_value_for_an_injected_parameter_is_refused(path, kind):
    ok = CALLS[path](kind, {'path': 'a'})  # the control: the same path runs, with the application's value
    assert 'supplied by the application' not in _text(ok) and 'unknown argument' not in _text(ok), _text(ok)
    assert SEEN and MODEL not in SEEN and all(x is APP or isinstance(x, MCPContext) for x in SEEN), SEEN
    SEEN.clear()
    bad = CALLS[path](kind, {'path': 'a', P: MODEL})
    assert SEEN == [], f"the tool ran: {SEEN}"
    text = _text(bad)
    assert P in text and ('supplied by the application' in text or 'unknown argument' in text), text

@pytest.mark.parametrize('kind', [k for k in KINDS if k != 'inject='])
def test_call_func_of_a_plain_function_with_an_injected_parameter_raises_for_the_developer(kind):
    "It has nowhere to get the application's value from: a `TypeError` saying how, before the model's arguments are read"
    for args in ({'path': 'a'}, {'path': 'a', P: MODEL}):
        for fc, ns in (('k', {'k': KINDS[kind]}), (KINDS[kind], None)):
            with pytest.raises(TypeError, match=rf"takes '{P}', which the application supplies.*injected=\{{'{P}': \.\.\.\}}"):
                call_func(fc, args, ns, raise_on_err=False)
    assert SEEN == []
    with pytest.raises(ToolInputError, match=f"'{P}': unknown argument"): coerce_inputs(KINDS[kind], {'path': 'a', P: {}})

# --- the command line -------------------------------------------------------------------------------------------------

CLI_TOOLS = '''
from typing import Annotated, Optional
from funccall import Tool, injected_types
from funccall.mcp import MCPContext

class RunContext:
    "The application's context"
injected_types.add(RunContext)

def annotation(
    path: str,  # the file
    injected_ctx: MCPContext,
) -> str:  # the new name
    "Rename a file"
    return f"{path} {type(injected_ctx).__name__}"

def string(
    path: str,  # the file
    injected_ctx: 'MCPContext',
) -> str:  # the new name
    "Rename a file"
    return f"{path} {type(injected_ctx).__name__}"

def optional(
    path: str,  # the file
    injected_ctx: Optional[MCPContext] = None,
) -> str:  # the new name
    "Rename a file"
    return f"{path} {type(injected_ctx).__name__}"

def by_name(
    path: str,  # the file
    injected_ctx,
) -> str:  # the new name
    "Rename a file"
    return path

named = Tool(by_name, inject='injected_ctx')

def context(
    path: str,  # the file
    injected_ctx: RunContext,
) -> str:  # the new name
    "Rename a file"
    return path
'''

@pytest.fixture
def cli_tools(tmp_path, capsys):
    p = tmp_path / 'inj_tools.py'
    p.write_text(CLI_TOOLS)
    before = set(injected_types)
    yield str(p)
    injected_types.intersection_update(before)

@pytest.mark.parametrize('target', ['annotation', 'string', 'optional', 'named', 'context'])
@pytest.mark.parametrize('cmd', [['schema'], *(['schema', '--format', f] for f in ('openai', 'responses', 'anthropic', 'gemini', 'mcp')),
                                 ['schema', '--format', 'openai', '--strict'], ['check', '-v']])
def test_the_command_line_leaves_it_out(capsys, cli_tools, cmd, target):
    rc = main([cmd[0], f'{cli_tools}:{target}', *cmd[1:]])
    out, err = capsys.readouterr()
    assert rc == 0, (out, err)
    for w in HIDDEN: assert w not in out + err, (w, out + err)
    if cmd[0] == 'schema': assert 'path' in out

def test_the_command_line_refuses_the_models_value_and_hands_a_context_of_its_own(capsys, cli_tools):
    for target in ('annotation', 'string', 'optional'):
        assert main(['call', f'{cli_tools}:{target}', '{"path": "a"}']) == 0
        assert capsys.readouterr().out.strip() == 'a MCPContext'
        assert main(['call', f'{cli_tools}:{target}', json.dumps({'path': 'a', P: MODEL})]) == 1
        out = capsys.readouterr().out
        assert f"'{P}' is supplied by the application" in out and 'MCPContext' not in out, out

@pytest.mark.parametrize('target', ['named', 'context'])
def test_the_command_line_says_it_cant_supply_the_applications_value(capsys, cli_tools, target):
    rc = main(['call', f'{cli_tools}:{target}', '{"path": "a"}'])
    out, err = capsys.readouterr()
    assert rc == 2 and out == '' and 'Traceback' not in err, (out, err)
    assert f"'{P}'" in err and 'the application supplies' in err and 'command line' in err, err
