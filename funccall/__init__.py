"""funccall: LLM function calling for Python.

`get_schema` turns a function into a JSON tool schema, `call_func` runs a model's tool call safely, and
`schema2sig`/`mk_tool` rebuild Python callables from tool schemas.
"""
from .core._package import VERSION, publish
from .core._ns import ToolNotFound, mk_ns, resolve_nm
from .core._types import KINDS, JsonSchema, SchemaError, TypeInfo, custom_types, injected_types, kind
from .core._warnings import SchemaWarning
from .core.schema import get_schema, get_schema_nm, handle_type, union_schema
from .core.call import ToolInputError, call_func, call_func_async, coerce_inputs, error_text
from .toolsets.pytool import python, python_isolated
from .core._run import WorkersExhausted, set_max_workers
from .core._seal import SealError
from .core._helpdoc import add_param_docs
from .core.providers import (
    Change, ProviderWarning, Report, function_to_tool, strict_schema, to_anthropic, to_gemini, to_mcp, to_openai, to_openai_responses,
    tool_choice, tool_name, provider_name
)
from .core.structured import OutputError, output_format, output_schema, parse_output, parse_output_stream
from .core.inverse import mk_param, mk_tool, schema2anno, schema2sig, tool_parts
from .core.expr import ExprCall, ExprError, parse_calls
from .loop.results import StopRun, ToolResult, ToolTimeout, call_str, to_text
from .loop.tools import Tool, ToolGroup, Toolbox
from .loop.messages import CustomToolCall, ToolCall, ToolMessages, UnansweredCall, tool_calls, tool_results
from .loop.turn import run_tool_calls, run_tool_calls_async
from .loop.content import Audio, File, Image
from .loop.stream import ToolCallStream

__version__ = VERSION
__all__ = ['get_schema', 'get_schema_nm', 'handle_type', 'union_schema', 'custom_types', 'injected_types', 'kind', 'KINDS', 'TypeInfo', 'JsonSchema',
           'mk_ns', 'resolve_nm', 'call_func', 'call_func_async', 'coerce_inputs', 'error_text',
           'python', 'python_isolated', 'set_max_workers', 'WorkersExhausted',
           'mk_param', 'schema2sig', 'mk_tool', 'schema2anno', 'tool_parts',
           'ExprCall', 'ExprError', 'parse_calls', 'Tool', 'ToolGroup', 'Toolbox', 'ToolResult', 'StopRun', 'call_str', 'to_text',
           'SchemaError', 'SchemaWarning', 'ToolNotFound', 'ToolInputError',
           'to_openai', 'to_openai_responses', 'to_anthropic', 'to_gemini', 'to_mcp', 'strict_schema', 'tool_name', 'provider_name',
           'function_to_tool', 'Report', 'Change', 'ProviderWarning', 'output_format', 'output_schema', 'parse_output', 'OutputError',
           'ToolCall', 'tool_calls', 'tool_results', 'run_tool_calls', 'run_tool_calls_async',
           'ToolTimeout', 'CustomToolCall', 'ToolMessages', 'UnansweredCall', 'Image', 'Audio', 'File', 'tool_choice',
           'parse_output_stream', 'ToolCallStream', 'SealError']

# `help(call_func)` shows each parameter's `# comment` (an `Args:` section built from them); `python` and
# `python_isolated` are tools themselves: their docstrings are what the model reads, left as written
# (before `publish`: each class's comments are read from the module that defines it, not this one)
add_param_docs(o for n, o in globals().items() if n in __all__ and n not in ('python', 'python_isolated'))

# What users see (a `repr`, a traceback, a signature) names the public path, `funccall.ToolInputError`, not the module
# that happens to define it (`funccall.core._inputs`): the name they can import, and one that survives moving code
for _nm in __all__:
    if isinstance(_o := globals()[_nm], type): publish(_o, 'funccall')
del _nm, _o  # pyright: ignore[reportPossiblyUnboundVariable]  # (`__all__` names classes: the loop ran)
