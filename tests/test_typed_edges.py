"""The typed edges of MCP and the toolsets, as a user's checker reads them, and the seam the toolsets read of a toolbox.

A user's script of these (MCP client and server, code mode, tool search: tests/typed/edges_script.py) is checked under
`mypy --strict` and pyright's strict mode with the other typed scripts, in tests/test_typed_script.py. `ToolboxLike` lists all the toolsets read of a toolbox: an object with only those members (no `Toolbox`) serves
code mode and tool search. And a target file that isn't Python is the loader's clear error, not an `AttributeError`."""
import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from funccall import Tool, Toolbox
from funccall._load import TargetError, load_target
from funccall.cli import main
from funccall.loop.results import ToolResult
from funccall.toolsets.boxlike import ToolboxLike
from funccall.toolsets.codemode import code_api, code_tool
from funccall.toolsets.search import deferred, find_tools

ROOT = Path(__file__).resolve().parents[1]

# --- ToolboxLike: exactly what the toolsets read ------------------------------------------------------------------

def _members() -> set[str]:
    "The members `ToolboxLike` declares: its attributes and methods"
    return {nm for nm in vars(ToolboxLike) if not nm.startswith('_') or nm == '__iter__'}

def test_toolboxlike_names_tools_groups_docs_injected_iteration_and_call():
    assert _members() == {'tools', 'groups', 'group_docs', 'injected', '__iter__', 'call'}

def test_a_toolbox_and_a_deferred_one_have_every_member():
    def add(a: int, b: int) -> int:
        "Add"
        return a + b
    for box in (Toolbox([add]), deferred(Toolbox([add]))):
        assert all(hasattr(box, nm) for nm in _members())

class _Only:
    "A toolbox as the toolsets see it, and nothing more: the members `ToolboxLike` lists, over a real `Toolbox` kept apart"
    def __init__(self, box: Toolbox):
        self._box = box
    @property
    def tools(self) -> Mapping[str, Tool]: return self._box.tools
    @property
    def groups(self) -> Mapping[str, str]: return self._box.groups
    @property
    def group_docs(self) -> Mapping[str, str]: return self._box.group_docs
    @property
    def injected(self) -> Mapping[str, Any]: return self._box.injected
    def __iter__(self) -> Iterator[Tool]: return iter(self._box)
    def call(self, name: str, args: dict[str, Any], *, injected: dict[str, Any]) -> ToolResult:
        return self._box.call(name, args, injected=injected)
    def __getattr__(self, nm: str):  # an attacker's probe: any other member read fails the test, loudly
        raise AssertionError(f"a toolset read {nm!r}, which ToolboxLike doesn't list")

def _weather_box() -> Toolbox:
    def get_weather(
        city: str,  # the city
    ) -> str:
        "The weather in a city"
        return f"sunny in {city}"
    def delete_file(path: str) -> str:
        "Delete a file"
        return path
    return Toolbox([get_weather, delete_file])

def test_code_mode_and_search_read_only_what_toolboxlike_lists():
    box: ToolboxLike = _Only(_weather_box())
    assert 'def get_weather(city: str) -> str:' in code_api(box)
    assert find_tools(box, 'remove a file')[0] == 'delete_file'
    run = code_tool(box, isolate=False, timeout=10)
    assert run(code='get_weather("Paris")') == 'sunny in Paris'

@dataclasses.dataclass
class _DataclassBox(_Only):
    "A ToolboxLike a checker accepts that no dict can key: a dataclass (so unhashable), `_Only`'s members and no more"
    _box: Toolbox

def test_a_toolboxlike_that_is_unhashable_is_searched_too():
    "ToolboxLike asks no hash and no weak reference: search's per-box index cache can't make one a requirement"
    box: ToolboxLike = _DataclassBox(_weather_box())
    with pytest.raises(TypeError): hash(box)
    for _ in range(2): assert find_tools(box, 'remove a file')[0] == 'delete_file'
    def forecast(city: str) -> str:
        "Tomorrow's weather forecast for a city"
        return city
    box._box.add(forecast)  # (indexed afresh each time: a new tool is found at once)
    assert 'forecast' in find_tools(box, 'forecast for tomorrow', limit=5)

# --- the loader: a file that isn't Python ------------------------------------------------------------------------

def test_a_target_file_that_isnt_python_is_a_target_error(tmp_path, capsys):
    p = tmp_path / 'tools'  # no .py: the import machinery finds no loader for it
    p.write_text('def f():\n    "d"\n')
    with pytest.raises(TargetError, match='not a Python file'): load_target(str(p))
    assert main(['schema', str(p)]) == 2  # the command line's usage error
    assert 'not a Python file' in capsys.readouterr().err
