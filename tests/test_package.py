"The package as a user meets it: its public API, its optional dependencies, its command line"
import json, subprocess, sys

import funccall

def _py(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)

def test_public_api_is_listed_and_exists():
    assert funccall.__all__ and all(hasattr(funccall, nm) for nm in funccall.__all__)
    for nm in ('get_schema', 'get_schema_nm', 'handle_type', 'call_func', 'call_func_async', 'mk_ns', 'resolve_nm', 'python'):
        assert nm in funccall.__all__

def test_optional_libraries_are_not_imported_for_plain_functions():
    r = _py('import sys, funccall\n'
            'def f(a: int, b: list[str] = None) -> int:\n    "Plain."\n    return a\n'
            'funccall.get_schema(f); funccall.call_func("f", {"a": 1}, [f])\n'
            'print(sorted(m for m in ("pydantic", "docstring_parser", "yaml", "mcp") if m in sys.modules))')
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '[]'

def test_main_job_prints_the_example_schemas():
    r = subprocess.run([sys.executable, '-m', 'funccall'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    tools = json.loads(r.stdout)
    assert [t['name'] for t in tools] == ['get_weather', 'add_note', 'book_meeting']
    assert tools[2]['input_schema']['$defs']['Person']['properties']['email']['description'] == 'Where the invitation goes'

def test_bad_target_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, '-m', 'funccall', 'schema', 'no_such_module_xyz'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count('\n') == 1 and 'no_such_module_xyz' in r.stderr and 'Traceback' not in r.stderr
