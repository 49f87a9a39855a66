"""The client's half of MCP tasks (SEP-1686, protocol 2025-11-25): a tool whose `execution.taskSupport` is 'required'
runs as a task. The `tools/call` carries `task: {ttl}` and is answered at once with the task; `tasks/get` is polled
(at the server's `pollInterval`, kept within `POLL`) until the task ends or needs input; `tasks/result` then gives
the tool's result (and, for a task that needs input, carries the server's questions to the client's callbacks
first). A task that outlives its deadline, or whose caller is cancelled, is cancelled at the server (`tasks/cancel`).
"""
from __future__ import annotations

import logging, math
from typing import Any, Awaitable, Callable

import anyio
import mcp_types as types

__all__ = ['POLL', 'TaskFailed', 'needs_task', 'can_run_tasks', 'run_task']

_log = logging.getLogger('funccall.mcp')
POLL = (0.1, 5.0)  # the shortest and longest wait between two `tasks/get`, whatever `pollInterval` the server asks for
_CANCEL_WAIT = 5.0  # seconds a `tasks/cancel` may take once the caller gave up
_LONGEST = 86400.0  # seconds the SDK is asked to wait for a reply that waits on a person (it takes no infinity)
_ENDED = ('completed', 'failed', 'cancelled')

class TaskFailed(Exception):
    "A task that ended 'failed' or 'cancelled' at the server; the message says which, in the server's words"

class _Send(types.Request[dict[str, Any], str]):
    "A request by method name: the task methods are outside the SDK's tables, which leave such replies unchecked"
    method: str
    params: dict[str, Any]

def needs_task(t: types.Tool) -> bool:
    "Whether tool `t` can only be called as a task"
    ex = getattr(t, 'execution', None)
    return getattr(ex, 'task_support', None) == 'required'

def can_run_tasks(session) -> str | None:
    "Why this connection can't run a tool as a task, or None when it can"
    tasks = getattr(session.server_capabilities, 'tasks', None)
    call = getattr(getattr(getattr(tasks, 'requests', None), 'tools', None), 'call', None)
    if call is None: return "it runs only as a task, and the server declared no tasks for tools/call"
    return None

async def _create(session, name: str, args: dict, meta: dict | None, ttl: float, timeout: float) -> types.CreateTaskResult | types.CallToolResult:
    "A task-augmented `tools/call`: the task, or the result when the server answered at once"
    # sent raw: the SDK checks every `tools/call` reply as a `CallToolResult`, which a task is not
    params = {'name': name, 'arguments': args, 'task': {} if math.isinf(ttl) else {'ttl': int(ttl * 1000)}}
    if meta: params['_meta'] = meta
    data, opts = {'method': 'tools/call', 'params': params}, {'timeout': timeout}
    session._stamp(data, opts)  # the protocol version header over HTTP, as the SDK's own requests carry it
    raw = await session._dispatcher.send_raw_request('tools/call', data['params'], opts)
    return types.CreateTaskResult.model_validate(raw) if 'task' in raw else types.CallToolResult.model_validate(raw)

async def _send(session, method: str, task_id: str, result, timeout: float):
    return await session.send_request(_Send(method=method, params={'taskId': task_id}), result, request_read_timeout_seconds=timeout)

def _pause(task: types.Task) -> float:
    "Seconds until the next poll: the server's `pollInterval`, within `POLL` (a hostile 0 or 10^12 changes nothing)"
    ms = task.poll_interval
    return POLL[1] if ms is None or not math.isfinite(ms) else min(max(ms / 1000, POLL[0]), POLL[1])

async def run_task(
    session,                  # the SDK's `ClientSession`
    name: str,                # the tool's name, as the server spells it
    args: dict,               # its arguments
    meta: dict | None,        # the request's `_meta` (a trace)
    timeout: float,           # seconds to wait for each reply
    deadline: float,          # seconds the whole task may take (`math.inf`: as long as it runs); then it is cancelled
    on_status: Callable[[types.Task], Awaitable[None]],  # called with each new status message
) -> types.CallToolResult:
    "Run tool `name` as a task to its end: its result, or `TaskFailed`; `TimeoutError` past `deadline` (the task cancelled)"
    created = await _create(session, name, args, meta, deadline, timeout)
    if isinstance(created, types.CallToolResult): return created
    task, said = created.task, None
    try:
        with anyio.fail_after(deadline):
            while True:
                if task.status_message != said:
                    said = task.status_message
                    await on_status(task)
                if task.status == 'input_required': break  # `tasks/result` carries the server's questions
                if task.status in _ENDED: break
                await anyio.sleep(_pause(task))
                task = await _send(session, 'tasks/get', task.task_id, types.GetTaskResult, timeout)
            if task.status in ('failed', 'cancelled'):
                raise TaskFailed(f"the task {task.status}" + (f": {task.status_message}" if task.status_message else ''))
            # a task waiting for input answers `tasks/result` only once it ends: the rest of the deadline, not `timeout`
            wait = timeout if task.status == 'completed' else min(deadline, _LONGEST)
            return await _send(session, 'tasks/result', task.task_id, types.CallToolResult, wait)
    except BaseException:  # past the deadline, or the caller was cancelled: the server stops the task too
        if task.status not in _ENDED: await _cancel(session, task.task_id)
        raise

async def _cancel(session, task_id: str) -> None:
    "Ask the server to cancel a task, for at most `_CANCEL_WAIT` s, even while the caller is being cancelled"
    with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_WAIT):
        try: await _send(session, 'tasks/cancel', task_id, types.CancelTaskResult, _CANCEL_WAIT)
        except Exception as e: _log.warning('MCP task %r could not be cancelled: %s', task_id, e)
