"""What the toolsets read of a toolbox, named: `ToolboxLike`.

Tool search (`search`) and code mode (`codemode`) take a toolbox and read only these members of it: `Toolbox` (and
every subclass, `DeferredToolbox` included) has them all, which a checker verifies below. Read-only members, so a
toolbox typed more precisely (a `dict[str, Tool]` for `Mapping[str, Tool]`) still fits. Types only: nothing here runs
per call, and the toolsets never check a toolbox against it at run time (a `Toolbox` is what they are given)."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..loop.results import ToolResult
    from ..loop.tools import Tool, Toolbox

__all__ = ['ToolboxLike']

class ToolboxLike(Protocol):
    "The members of a toolbox the toolsets read: its tools by name and in order, their groups, its injected values, and `call`"
    @property
    def tools(self) -> Mapping[str, Tool]: ...        # tool name -> tool (search reads names, descriptions, schemas)
    @property
    def groups(self) -> Mapping[str, str]: ...        # tool name -> the group or MCP server it belongs to
    @property
    def group_docs(self) -> Mapping[str, str]: ...    # group -> what its tools are for
    @property
    def injected(self) -> Mapping[str, Any]: ...      # the application's values for injected parameters (code mode: which it holds)
    def __iter__(self) -> Iterator[Tool]: ...         # its tools, in order (code mode's functions)
    def call(
        self,
        name: str,                                   # the tool's name
        args: dict[str, Any],                        # its arguments, as a program passed them
        *,
        injected: dict[str, Any],                    # values for injected parameters, for this call (over the toolbox's)
    ) -> ToolResult: ...                             # the call's result: `ok`, `value`, `error`, `status`

if TYPE_CHECKING:  # a checker (mypy, pyright) verifies that a `Toolbox` is one; nothing runs
    def _a_toolbox_is_toolboxlike(box: Toolbox) -> ToolboxLike: return box
