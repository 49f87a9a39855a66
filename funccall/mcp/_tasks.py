"""The client's half of MCP tasks, in both of their forms.

SEP-1686 (protocol 2025-11-25): a tool whose `execution.taskSupport` is 'required' runs as a task. The `tools/call`
carries `task: {ttl}` and is answered at once with the task; `tasks/get` is polled until the task ends or needs
input; `tasks/result` then gives the tool's result (and, for a task that needs input, carries the server's questions
to the client's callbacks first).

SEP-2663 (the `io.modelcontextprotocol/tasks` extension of 2026-07-28): the client declares the extension
(`TasksExtension`), and the server may answer any `tools/call` with a task (`resultType: "task"`); `tasks/get` is
polled until it carries the result (or the error), the server's questions in `inputRequests` are answered through the
client's callbacks and sent back with `tasks/update`.

Either way the poll waits the server's interval, kept within `POLL`, each new status message goes to `on_status`,
and a task that outlives its deadline, or whose caller is cancelled, is cancelled at the server (`tasks/cancel`).
"""
from __future__ import annotations

import logging, math
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any, Awaitable, Callable, Literal, NamedTuple

import anyio
import mcp_types as types
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from ._store import STORE_ERROR

__all__ = ['POLL', 'TaskFailed', 'Waiting', 'TasksExtension', 'waiting', 'needs_task', 'can_run_tasks', 'run_task', 'follow']

_log = logging.getLogger('funccall.mcp')
POLL = (0.1, 5.0)  # the shortest and longest wait between two `tasks/get`, whatever `pollInterval` the server asks for
_CANCEL_WAIT = 5.0  # seconds a `tasks/cancel` may take once the caller gave up
_LONGEST = 86400.0  # seconds the SDK is asked to wait for a reply that waits on a person (it takes no infinity)
_ENDED = ('completed', 'failed', 'cancelled')
_STORE_GRACE = 30.0  # seconds of polls a server's shared store may fail in a row (Redis restarting, stalled) before the call fails

class TaskFailed(Exception):
    """A task that ended 'failed' or 'cancelled' at the server; the message says which, in the server's words, and `code`
    is the failed task's error code (never read as a failure of the connection or a timeout: the server chose it)"""
    def __init__(self, text: str, code: int | None = None): super().__init__(text); self.code = code

class Waiting(NamedTuple):
    "How one call waits for its task: seconds for each reply, seconds for the whole task, and where status messages go"
    timeout: float
    deadline: float  # `math.inf`: as long as the task runs
    on_status: Callable[[Any], Awaitable[None]]  # called with the task at each new status message

waiting: ContextVar[Waiting | None] = ContextVar('funccall_mcp_task_waiting', default=None)  # set by the caller, per call

class _Send(types.Request[dict[str, Any], str]):
    "A request by method name: the task methods are outside the SDK's tables, which leave such replies unchecked"
    method: str
    params: dict[str, Any]

def _ask(method: str, task_id: str, **more) -> _Send: return _Send(method=method, params={'taskId': task_id, **more})

def _pause(task, n: int) -> float:
    """Seconds before poll `n` (from 0): from `POLL[0]`, doubling up to the server's `pollInterval` kept within `POLL`
    (a quick task ends quickly; a hostile 0 or 10^12 changes nothing)"""
    ms = task.poll_interval
    most = POLL[1] if ms is None or not math.isfinite(ms) else min(max(ms / 1000, POLL[0]), POLL[1])
    return min(most, POLL[0] * 2 ** min(n, 16))

def _ended(task) -> str:
    return f"the task {task.status}" + (f": {task.status_message}" if task.status_message else '')

class _Watch:
    "One task followed to its end: its latest state, status messages passed on once each, polls paced by `_pause`"
    failing: float | None  # since when its store has been failing (None: it answers)
    def __init__(self, session, task, w: Waiting):
        self.session, self.task, self.w, self.said, self.n, self.failing = session, task, w, None, 0, None
        self.tid = task.task_id  # the task made: a reply naming another never redirects the polls or the cancel

    async def seen(self, task) -> None:
        self.task = task
        if task.status_message not in (None, self.said):
            self.said = task.status_message
            await self.w.on_status(task)

    async def poll(self, result_type) -> None:
        "Wait the pause, then `tasks/get`; a server whose shared store fails is asked again, for `_STORE_GRACE` s in a row at most"
        await anyio.sleep(_pause(self.task, self.n))
        self.n += 1
        try: got = await self.get('tasks/get', result_type)
        except MCPError as e:  # the task runs on at the server while its store is down: its end is recorded once the store is back
            now = anyio.current_time()
            if e.code != STORE_ERROR or now - (self.failing or now) > _STORE_GRACE: raise
            self.failing = self.failing or now
            _log.warning('MCP task %r: %s; asking again', self.tid, e.message)
            return
        self.failing = None
        await self.seen(got)

    async def get(self, method: str, result_type, wait: float | None = None, **more):
        return await self.session.send_request(_ask(method, self.tid, **more), result_type,
                                               request_read_timeout_seconds=wait or self.w.timeout)

    @asynccontextmanager
    async def bounded(self):
        "The deadline around the block; a block left early (the deadline, the caller cancelled, a failure) cancels the task"
        try:
            with anyio.fail_after(self.w.deadline): yield
        except BaseException:
            if self.task.status not in _ENDED: await _cancel(self.session, self.tid)
            raise

async def _cancel(session, task_id: str) -> None:
    "Ask the server to cancel a task, for at most `_CANCEL_WAIT` s, even while the caller is being cancelled"
    with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_WAIT):
        try: await session.send_request(_ask('tasks/cancel', task_id), types.Result, request_read_timeout_seconds=_CANCEL_WAIT)
        except Exception as e: _log.warning('MCP task %r could not be cancelled: %s', task_id, e)

# --- SEP-1686 (2025-11-25) -------------------------------------------------------------------------------

def needs_task(t: types.Tool) -> bool:
    "Whether tool `t` can only be called as a task"
    return getattr(getattr(t, 'execution', None), 'task_support', None) == 'required'

def can_run_tasks(session) -> str | None:
    "Why this connection can't run a tool as a task, or None when it can"
    tasks = getattr(session.server_capabilities, 'tasks', None)
    call = getattr(getattr(getattr(tasks, 'requests', None), 'tools', None), 'call', None)
    return "it runs only as a task, and the server declared no tasks for tools/call" if call is None else None

async def _create(session, name: str, args: dict, meta: dict | None, w: Waiting) -> types.CreateTaskResult | types.CallToolResult:
    "A task-augmented `tools/call`: the task, or the result when the server answered at once"
    # sent raw: the SDK checks every `tools/call` reply as a `CallToolResult`, which a task is not
    params = {'name': name, 'arguments': args, 'task': {} if math.isinf(w.deadline) else {'ttl': int(w.deadline * 1000)}}
    if meta: params['_meta'] = meta
    data, opts = {'method': 'tools/call', 'params': params}, {'timeout': w.timeout}
    session._stamp(data, opts)  # the protocol version header over HTTP, as the SDK's own requests carry it
    raw = await session._dispatcher.send_raw_request('tools/call', data['params'], opts)
    return types.CreateTaskResult.model_validate(raw) if 'task' in raw else types.CallToolResult.model_validate(raw)

async def run_task(
    session,                  # the SDK's `ClientSession`
    name: str,                # the tool's name, as the server spells it
    args: dict,               # its arguments
    meta: dict | None,        # the request's `_meta` (a trace)
    w: Waiting,               # how to wait
) -> types.CallToolResult:
    "Run tool `name` as a task to its end: its result, or `TaskFailed`; `TimeoutError` past the deadline (the task cancelled)"
    created = await _create(session, name, args, meta, w)
    if isinstance(created, types.CallToolResult): return created
    t = _Watch(session, created.task, w)
    async with t.bounded():
        await t.seen(created.task)
        while t.task.status not in (*_ENDED, 'input_required'): await t.poll(types.GetTaskResult)
        if t.task.status in ('failed', 'cancelled'): raise TaskFailed(_ended(t.task))
        # `tasks/result` carries the questions of a task waiting for input, and answers once it ends: no `timeout` then
        return await t.get('tasks/result', types.CallToolResult, None if t.task.status == 'completed' else min(w.deadline, _LONGEST))

# --- SEP-2663 (the tasks extension of 2026-07-28) ---------------------------------------------------------

EXTENSION = 'io.modelcontextprotocol/tasks'

class _TaskFields(types.Result):
    "What every SEP-2663 task message carries (camelCase on the wire)"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: float | None = None

    @property
    def poll_interval(self) -> float | None: return self.poll_interval_ms  # the name `_pause` reads, as SEP-1686 spells it

class TaskHandle(_TaskFields):
    "A `tools/call` answered with a task"
    result_type: Literal['task']

class TaskState(_TaskFields):
    "A `tasks/get` reply: the task, with its result, its error or the server's questions inlined"
    result: dict | None = None
    error: dict | None = None
    input_requests: dict | None = None

class TasksExtension(ClientExtension):
    "Declares the tasks extension, and turns a task answering a `tools/call` into the call's result"
    identifier = EXTENSION

    def claims(self): return [ResultClaim(result_type='task', model=TaskHandle, resolve=_resolve)]

async def _resolve(handle: TaskHandle, ctx) -> types.CallToolResult:
    return await follow(ctx.session, handle, waiting.get() or Waiting(ctx.read_timeout_seconds or 60, math.inf, _quiet))

async def _quiet(task) -> None: pass

async def follow(session, handle: TaskHandle, w: Waiting) -> types.CallToolResult:
    "Poll the task `handle` to its end: its result; `TaskFailed` if it failed or was cancelled; `TimeoutError` past the deadline"
    t = _Watch(session, handle, w)
    async with t.bounded():
        await t.seen(handle)
        while True:
            task = t.task
            if task.status == 'completed' and getattr(task, 'result', None) is not None:
                return types.CallToolResult.model_validate(task.result)
            if task.status == 'failed':
                err = task.error if isinstance(getattr(task, 'error', None), dict) else {}
                code = err.get('code') if isinstance(err.get('code'), int) else types.INTERNAL_ERROR
                raise TaskFailed(str(err.get('message') or _ended(task)), code)
            if task.status == 'cancelled': raise TaskFailed(_ended(task))
            if task.status == 'input_required' and getattr(task, 'input_requests', None): await _answer(t)
            await t.poll(TaskState)  # paced even once answered: a server asking again at once meets the same pauses

async def _answer(t: _Watch) -> None:
    "The server's questions (`inputRequests`) answered by the client's callbacks, sent back with `tasks/update`"
    asked = types.InputRequiredResult.model_validate({'resultType': 'input_required', 'inputRequests': t.task.input_requests})
    answers = {}
    for key, req in asked.input_requests.items():  # type: ignore[union-attr]  # (asked only when the task has them)
        ctx = ClientRequestContext(session=t.session, request_id=key, meta=req.params.meta if req.params else None)
        a = await t.session.dispatch_input_request(ctx, req)
        if isinstance(a, types.ErrorData): raise MCPError(a.code, a.message)
        answers[key] = a.model_dump(mode='json', by_alias=True, exclude_none=True)
    await t.get('tasks/update', types.Result, inputResponses=answers)
