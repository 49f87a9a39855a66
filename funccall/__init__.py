"""funccall: LLM function calling for Python.

`get_schema` turns a function into a JSON tool schema, `call_func` runs a model's tool call safely, and
`schema2sig`/`mk_tool` rebuild Python callables from tool schemas.
"""
from ._ns import ToolNotFound, mk_ns, resolve_nm
from ._types import KINDS, JsonSchema, SchemaError, custom_types, kind
from .schema import SchemaWarning, get_schema, get_schema_nm, handle_type, union_schema
from .call import ToolInputError, call_func, call_func_async, coerce_inputs
from .pytool import python
from .inverse import mk_param, mk_tool, schema2anno, schema2sig, tool_parts

__version__ = '0.1.0'
__all__ = ['get_schema', 'get_schema_nm', 'handle_type', 'union_schema', 'custom_types', 'kind', 'KINDS', 'JsonSchema',
           'mk_ns', 'resolve_nm', 'call_func', 'call_func_async', 'coerce_inputs', 'python',
           'mk_param', 'schema2sig', 'mk_tool', 'schema2anno', 'tool_parts',
           'SchemaError', 'SchemaWarning', 'ToolNotFound', 'ToolInputError']
