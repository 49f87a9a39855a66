"""What a new user naturally passes, and one rule for nulls on every path (issue 18, items 5-7).

- A `Toolbox` (or `ToolGroup`, or a list of tools) wherever a namespace or a toolbox is taken.
- `inject` as one name or several.
- One set of provider names (`provider_name`): any case, `-` or `_`, aliases, in every function that takes a provider.
- `Toolbox.instructions()`: the tools' `instructions=` as a system-prompt block.
- Nulls: every null for an optional parameter whose schema has no null is "not given", however many, at the top and
  inside objects; null for a parameter with a default is that default, through `call_func`, `Toolbox.call`, a `Tool`
  called directly, and a tool built from the schema (`mk_tool`); errors count every problem and say only ten are shown.
- What users read names public paths, and readable schema names (`TurnList`).
"""
import asyncio
import inspect
from dataclasses import dataclass
from typing import Literal

import pytest

import funccall
from funccall import (SchemaError, Tool, ToolGroup, ToolInputError, Toolbox, call_func, call_func_async, get_schema, mk_tool,
                      output_format, provider_name, run_tool_calls, run_tool_calls_async, strict_schema, tool_calls, tool_name,
                      tool_results)


def silly_sum(
    a: int,      # First thing to sum
    b: int = 1,  # Second thing to sum
) -> int:        # The sum
    "Adds a + b."
    return a + b

def greet(
    name: str,     # who to greet
    user_id: str,  # the application's user
) -> str:          # the greeting
    "Greet someone on behalf of the user."
    return f'{user_id} greets {name}'

class Calc:
    "A calculator"
    def mul(
        self,
        a: int,  # a factor
        b: int,  # another
    ) -> int:    # the product
        "Multiply."
        return a * b

def openai_response(name: str, arguments: str) -> dict:
    return {'choices': [{'message': {'role': 'assistant', 'tool_calls': [
        {'id': 'c1', 'type': 'function', 'function': {'name': name, 'arguments': arguments}}]}}]}

# --- a Toolbox wherever a namespace or toolbox is taken -----------------------------------------------------------

def test_call_func_takes_a_toolbox():
    box = Toolbox([silly_sum, ToolGroup(Calc())])
    assert call_func('silly_sum', {'a': 2}, box) == 3  # the tool's own pipeline, and its value, as from a list of functions
    assert call_func('calc-mul', {'a': 2, 'b': 5}, box) == 10
    assert box.call('silly_sum', {'a': 2}).text == '3'  # the text the model reads is `Toolbox.call`'s
    with pytest.raises(funccall.ToolNotFound, match="Unknown tool 'nope'; available tools: 'silly_sum', 'calc-mul'"):
        call_func('nope', {}, box)
    assert asyncio.run(call_func_async('silly_sum', {'a': 4}, box)) == 5

def test_call_func_takes_a_tool_group_and_a_list_mixing_toolboxes_and_functions():
    assert call_func('calc-mul', {'a': 3, 'b': 3}, ToolGroup(Calc())) == 9
    ns = [Toolbox([greet_tool := Tool(greet, inject='user_id')]), silly_sum]
    assert call_func('silly_sum', {'a': 1, 'b': 1}, ns) == 2  # the plain function: its value
    assert funccall.mk_ns(ns)['greet'] is greet_tool

def test_call_func_of_a_toolbox_refuses_what_it_does_not_hold():
    "Only the toolbox's tools are reachable: not the functions' modules, not the toolbox's own methods"
    box = Toolbox([silly_sum])
    for nm in ('add', 'definitions', 'silly_sum.__globals__', 'tools'):
        assert call_func(nm, {}, box, raise_on_err=False).startswith('ToolNotFound')

def test_a_toolbox_finds_the_names_a_provider_knows_its_tools_by():
    def dotted(x: int) -> int:
        "Echo."
        return x
    box = Toolbox([Tool(dotted, name='my.tool')])
    [d] = box.definitions('openai', rename=True)
    assert call_func(d['function']['name'], {'x': 4}, box) == 4

def test_run_tool_calls_takes_a_list_of_tools():
    out = run_tool_calls([silly_sum, Calc().mul], openai_response('mul', '{"a": 6, "b": 7}'))
    assert out == [{'role': 'tool', 'tool_call_id': 'c1', 'content': '42'}]
    out = asyncio.run(run_tool_calls_async([silly_sum], openai_response('silly_sum', '{"a": 1}')))
    assert out == [{'role': 'tool', 'tool_call_id': 'c1', 'content': '2'}]

def test_a_toolbox_takes_another_toolbox():
    box = Toolbox([Toolbox([silly_sum]), ToolGroup(Calc())])
    assert list(box.tools) == ['silly_sum', 'calc-mul']

# --- inject as one name or several --------------------------------------------------------------------------------

@pytest.mark.parametrize('inject', ['user_id', ('user_id',), ['user_id']])
def test_inject_takes_a_name_or_names(inject):
    t = Tool(greet, inject=inject)
    assert t.inject == ('user_id',) and list(t.schema['input_schema']['properties']) == ['name']
    assert t.execute({'name': 'Ann'}, injected={'user_id': 'u1'}).value == 'u1 greets Ann'

def test_inject_names_an_unknown_parameter_whole():
    with pytest.raises(SchemaError, match=r"Tool 'greet' has no parameter 'uid' to inject"): Tool(greet, inject='uid')

def test_a_tool_group_injects_one_name_too():
    class Shop:
        def buy(
            self,
            sku: str,      # what
            user_id: str,  # whose
        ) -> str:          # the order
            "Buy."
            return f'{user_id}:{sku}'
    g = ToolGroup(Shop(), inject='user_id')
    assert g.tools['shop-buy'].inject == ('user_id',)
    assert Toolbox([g], injected={'user_id': 'u9'}).call('shop-buy', {'sku': 'x'}).value == 'u9:x'

# --- one set of provider names -------------------------------------------------------------------------------------

@pytest.mark.parametrize('given,name', [
    ('openai', 'openai'), ('OpenAI', 'openai'), ('chat', 'openai'), ('responses', 'openai_responses'),
    ('Responses', 'openai_responses'), ('openai-responses', 'openai_responses'), ('OPENAI_RESPONSES', 'openai_responses'),
    ('anthropic', 'anthropic'), ('Claude', 'anthropic'), ('Gemini', 'gemini'), ('google', 'gemini'), ('MCP', 'mcp'),
])
def test_provider_name(given, name):
    assert provider_name(given) == name

def test_an_unknown_provider_names_the_choices():
    with pytest.raises(ValueError, match=r"Unknown provider 'bedrock'; use one of 'openai', 'responses', 'anthropic', 'gemini', 'mcp'"):
        provider_name('bedrock')
    with pytest.raises(ValueError, match=r"use one of 'openai', 'anthropic'$"): provider_name('gemini', ('openai', 'anthropic'))

@pytest.mark.parametrize('p', ['responses', 'openai_responses', 'Responses', 'OpenAI-Responses'])
def test_every_function_takes_every_spelling(p):
    "The same spellings in definitions, tool_calls, tool_results, output_format, tool_name and strict_schema"
    box = Toolbox([silly_sum])
    [d] = box.definitions(p)
    assert d['type'] == 'function' and d['name'] == 'silly_sum'  # the Responses shape
    resp = {'output': [{'type': 'function_call', 'call_id': 'c', 'name': 'silly_sum', 'arguments': '{"a": 1}'}]}
    [c] = tool_calls(resp, p)
    assert tool_results([box.call(c.name, c.arguments, c.id)], p) == [{'type': 'function_call_output', 'call_id': 'c', 'output': '2'}]
    assert output_format(int, p)['text']['format']['type'] == 'json_schema'
    assert tool_name('calc.add', p) == 'calc-add'
    assert strict_schema(get_schema(silly_sum)['input_schema'], provider=p)['required'] == ['a', 'b']

def test_claude_is_anthropic_everywhere():
    box = Toolbox([silly_sum])
    assert box.definitions('Claude') == box.definitions('anthropic')
    assert output_format(int, 'claude') == output_format(int, 'anthropic')

# --- instructions ---------------------------------------------------------------------------------------------------

def test_toolbox_instructions_is_a_system_prompt_block():
    box = Toolbox([silly_sum, Tool(greet, inject='user_id', instructions='Greet once per conversation.\nNever greet yourself.'),
                   Tool(Calc().mul, instructions='  Use for products only.  ')])
    assert box.instructions() == ('How to use the tools:\n'
                                  '- greet: Greet once per conversation.\n  Never greet yourself.\n'
                                  '- mul: Use for products only.')
    assert Toolbox([silly_sum]).instructions() == ''
    assert 'Greet once' not in str(box.definitions('openai'))  # instructions are for the system prompt, not the definition

# --- one rule for nulls ---------------------------------------------------------------------------------------------

OPTIONALS = {'name': 'opts', 'description': 'Many optional parameters',
             'input_schema': {'type': 'object', 'required': ['q'],
                              'properties': {'q': {'type': 'string'}, **{f'p{i}': {'type': 'integer'} for i in range(25)}}}}

def _sent(nm, /, **kw): return kw

@pytest.mark.parametrize('n', [1, 10, 11, 12, 25])
def test_nulls_for_optionals_without_null_are_not_given_however_many(n):
    nulls = {f'p{i}': None for i in range(n)}
    built = mk_tool(_sent, OPTIONALS)
    assert built(q='x', **nulls) == {'q': 'x'}  # the built tool called directly
    assert call_func('opts', {'q': 'x', **nulls}, [built]) == {'q': 'x'}  # through call_func
    assert Toolbox([built]).call('opts', {'q': 'x', **nulls}).value == {'q': 'x'}  # through a toolbox

@pytest.mark.parametrize('n', [1, 11, 25])
def test_nulls_inside_objects_are_not_given_however_many(n):
    tool = {'name': 'nest', 'description': 'An object of optional keys', 'input_schema': {'type': 'object', 'properties': {
        'o': {'type': 'object', 'required': ['must'], 'properties': {'must': {'type': 'integer'}, **{f'k{i}': {'type': 'string'} for i in range(25)}}}}}}
    built = mk_tool(_sent, tool)
    assert built(o={'must': 1, **{f'k{i}': None for i in range(n)}}) == {'o': {'must': 1}}
    with pytest.raises(ToolInputError, match=r"argument 'o\.must': expected an integer, got null"):  # a required key's null stays refused
        built(o={'must': None, **{f'k{i}': None for i in range(n)}})

def test_the_count_of_problems_is_every_problem_and_says_ten_are_shown():
    built = mk_tool(_sent, OPTIONALS)
    with pytest.raises(ToolInputError) as e: built(q=1, **{f'p{i}': 'x' for i in range(11)})
    lines = str(e.value).splitlines()
    assert lines[0] == "Tool 'opts' got 12 bad arguments (the first 10 shown):"
    assert len(lines) == 12 and lines[-1] == '- ... and 2 more'
    assert len(e.value.errors) == 12

def test_ten_problems_are_all_shown():
    with pytest.raises(ToolInputError) as e: mk_tool(_sent, OPTIONALS)(q=1, **{f'p{i}': 'x' for i in range(9)})
    assert str(e.value).splitlines()[0] == "Tool 'opts' got 10 bad arguments:" and 'more' not in str(e.value)

def test_call_func_says_its_count_stopped():
    "call_func stops reading at eleven problems (bounded time on huge input): it says so"
    def many(
        xs: list[int],  # numbers
    ) -> int:           # how many
        "Count."
        return len(xs)
    with pytest.raises(ToolInputError) as e: call_func('many', {'xs': ['a'] * 50}, [many])
    assert str(e.value).splitlines()[0] == "Tool 'many' got at least 11 bad arguments (the first 10 shown):"

def limit_tool(
    q: str,                # what
    limit: int | None = 5, # how many; None for all
) -> dict:                 # what it got
    "Search."
    return {'q': q, 'limit': limit}

def test_null_for_a_parameter_with_a_default_of_a_function_is_the_default_on_every_path():
    "Your function: null for a parameter with a default means that default (strict mode's null), whoever runs the call"
    args = {'q': 'x', 'limit': None}
    expected = {'q': 'x', 'limit': 5}
    assert call_func('limit_tool', args, [limit_tool]) == expected
    t = Tool(limit_tool)
    assert t.execute(args).value == expected and Toolbox([t]).call('limit_tool', args).value == expected
    assert t(args) == '{"q": "x", "limit": 5}'

def test_null_for_a_built_tool_follows_its_schema_on_every_path():
    "A tool built from a schema: null is sent where the schema takes null (default or not), else it is not given;"
    "the same called directly, through call_func (which once dropped it) and through a Toolbox"
    tool = {'name': 'lim', 'description': 'd', 'input_schema': {'type': 'object', 'properties': {
        'limit': {'type': ['integer', 'null'], 'default': 5}, 'page': {'type': 'integer', 'default': 1}}}}
    built = mk_tool(_sent, tool)
    args = {'limit': None, 'page': None}
    assert built(**args) == call_func('lim', args, [built]) == Toolbox([built]).call('lim', args).value == {'limit': None}

def test_null_for_a_nullable_parameter_without_a_default_is_sent():
    tool = {'name': 'n', 'description': 'd', 'input_schema': {'type': 'object', 'properties': {'m': {'type': ['integer', 'null']}}}}
    assert mk_tool(_sent, tool)(m=None) == {'m': None}

# --- what users read --------------------------------------------------------------------------------------------------

def test_public_classes_show_their_public_path():
    classes = [getattr(funccall, n) for n in funccall.__all__ if inspect.isclass(getattr(funccall, n))]
    assert len(classes) > 15 and [c for c in classes if c.__module__ != 'funccall'] == []
    assert repr([ToolInputError('x')]) == "[ToolInputError('x')]"
    assert funccall.ToolInputError.__module__ + '.' + funccall.ToolInputError.__qualname__ == 'funccall.ToolInputError'

def test_a_built_tools_classes_name_no_private_module():
    tool = {'name': 'ev', 'description': 'd', 'input_schema': {'type': 'object', 'properties': {'loc': {'$ref': '#/$defs/Location'}},
                                                           '$defs': {'Location': {'type': 'object', 'properties': {'x': {'type': 'integer'}}}}}}
    assert str(inspect.signature(mk_tool(_sent, tool))) == '(*, loc: funccall.Location = None)'

@dataclass
class Turn:
    "One turn of a dialogue"
    speaker: Literal['user', 'assistant']
    text: str

@pytest.mark.parametrize('t,name', [(list[Turn], 'TurnList'), (dict[str, Turn], 'StrTurnDict'), (Turn | None, 'TurnOrNone'),
                                    (tuple[int, str], 'IntStrTuple'), (Turn, 'Turn'), (list[int], 'IntList')])
def test_output_format_names_read_like_names(t, name):
    assert output_format(t, report=funccall.Report())['response_format']['json_schema']['name'] == name

def test_get_schema_nm_takes_what_call_func_takes():
    calc = Calc()
    assert funccall.get_schema_nm('calc.mul', [calc.mul, {'calc': calc}])['name'] == 'calc.mul'
    assert funccall.get_schema_nm('calc-mul', Toolbox([ToolGroup(calc)]))['name'] == 'calc-mul'
