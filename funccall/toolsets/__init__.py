"""Capabilities that take a toolbox and give a tool, a toolbox or definitions: tool search and deferred definitions
(`search`), code mode (`codemode`, its child process `_codechild`, the OS sandbox `_sandbox`), prefixed and filtered
toolboxes (`wrap`), and the `python` code tools (`pytool`). What they read of a toolbox is named in `boxlike`
(`ToolboxLike`). The toolbox never knows it is wrapped: nothing below imports these.

Empty on purpose: code mode's child process and `python_isolated`'s import single modules of this package."""
