"""An exception raised into a worker thread from outside, landing at each place in the pool's own code where one can:
run as a script (`python tests/pool_landing.py KIND...`) by `test_pool_faults.py`, in a process of its own and untraced.

CPython checks for such an exception where a thread's code enters a function, just after a call returns, and at a jump
back (its eval-breaker checks). `Injector` counts those places as the pool's worker threads pass them, on each Python's
own instruction stream (an opcode trace to 3.11, `sys.monitoring` from 3.12), and raises `Landed` at the `target`th;
`scenario(kind, target)` runs jobs through a fresh pool so, and checks that none was lost or run twice, that each
listener heard of its job once, and that the pool's counts and threads are right after. `main` takes every target in
turn, until one is past the last place a run passes. The scenarios (`KINDS`), each from a second reviewer's holes:
batches of new, waiting and woken threads; a tool that submits to the pool itself (so the pool's caller code runs in a
worker thread); callers that abandon or drop jobs mid-run; threads that end idle; a pool at its thread limit."""
import collections, dis, sys, threading, time
from funccall import _async_exc, _run
from funccall._run import WorkersExhausted, _Workers

class Landed(Exception): "raised into a worker thread, as from outside"

def _codes():
    "The pool's own code: what its worker threads run of funccall"
    for cls in (_run._Workers, _run._Job):
        for v in vars(cls).values():
            if isinstance(v, property): v = v.fget
            if hasattr(v, '__code__'): yield v.__code__
    yield _async_exc.drop_pending_exception.__code__
POOL = {c: {i.offset: i.opname for i in dis.get_instructions(c)} for c in _codes()}
CALLS = {'CALL', 'CALL_KW', 'CALL_FUNCTION', 'CALL_FUNCTION_KW', 'CALL_FUNCTION_EX', 'CALL_METHOD'}

class Injector:
    """Counts the places in the pool's own code where an exception raised into a worker thread from outside can land (a
    function's entry, just after a call returns, a jump back) and raises `Landed` at the `target`th"""
    def __init__(self, target: int):
        self.target, self.seen, self.fired, self.where, self.prev, self.lock = target, 0, '', None, {}, threading.Lock()
        self.active = False

    def step(self, frame, offset: int):
        "Before the instruction at `offset` of `frame` (pool code, in a worker thread) runs"
        if not self.active: return
        names = POOL[frame.f_code]
        if frame not in self.prev:  # its entry, unless it is the thread's own start: no outside code has aimed at it yet
            before = 'start' if frame.f_back is None or frame.f_back.f_code is threading.Thread.run.__code__ else None
        else: before = self.prev[frame]
        self.prev[frame] = offset
        if before == 'start' or offset == before: return
        op = names.get(before, '')
        if before is None or op in CALLS or (offset < before and 'JUMP' in op and 'NO_INTERRUPT' not in op):
            with self.lock:
                self.seen += 1
                if self.seen != self.target: return
            self.fired = f'{frame.f_code.co_name} at {offset}, after {op or "its entry"}'
            raise Landed()

    def __enter__(self):
        if sys.version_info >= (3, 12):  # (3.12.1 crashes when a `settrace` opcode event raises)
            M = sys.monitoring
            M.use_tool_id(M.DEBUGGER_ID, 'pool fault test')
            def on(code, offset):
                if threading.current_thread().name == 'funccall-tool': self.step(sys._getframe(1), offset)
            M.register_callback(M.DEBUGGER_ID, M.events.INSTRUCTION, on)
            for code in POOL: M.set_local_events(M.DEBUGGER_ID, code, M.events.INSTRUCTION)
        else:
            def tracer(frame, event, arg):
                if frame.f_code not in POOL: return None
                frame.f_trace_opcodes = True
                def local(frame, event, arg):
                    if event == 'opcode': self.step(frame, frame.f_lasti)
                    return local
                return local
            threading.settrace(tracer)
        self.active = True
        return self

    def __exit__(self, *exc):
        self.active = False
        if sys.version_info >= (3, 12):
            M = sys.monitoring
            for code in POOL: M.set_local_events(M.DEBUGGER_ID, code, 0)
            M.register_callback(M.DEBUGGER_ID, M.events.INSTRUCTION, None)
            M.free_tool_id(M.DEBUGGER_ID)
        else: threading.settrace(None)
        self.prev.clear()

def _pool_threads(pool) -> list:
    "The threads alive that run `pool`'s work"
    return [t for t in threading.enumerate() if getattr(getattr(t, '_target', None), '__self__', None) is pool]

class Run:
    "A fresh pool, and what its jobs did: how often each ran and how often its listener heard"
    def __init__(self, size: int, target: int):
        self.pool, self.target, self.inj = _Workers(size), target, None
        self.pool.IDLE_SECS = 10.0  # (longer than a batch waits: a job left in `ready` is not taken by a thread ending idle)
        self.ran, self.told, self.lock, self.gate = collections.Counter(), collections.Counter(), threading.Lock(), threading.Event()

    def where(self) -> str: return f'landing point {self.target} ({self.inj.fired or "none"})'

    def work(self, i: int, wait: bool=False) -> int:
        with self.lock: self.ran[i] += 1
        if wait: self.gate.wait(5)
        return i * 2

    def submit(self, i: int, wait: bool=False, fn=None):
        def heard(job):
            with self.lock: self.told[i] += 1
        return self.pool.submit(fn or (lambda: self.work(i, wait)), heard)

    def check(self, jobs: dict, dropped=()):
        "Each job ran once (or ended with `Landed` as it started, or could not start) and its listener heard once"
        deadline = time.monotonic() + 5
        while any(self.told[i] == 0 and not (i in dropped and j.state == 'dropped') for i, j in jobs.items()) and time.monotonic() < deadline:
            time.sleep(0.0005)
        for i, j in jobs.items():
            if i in dropped and j.state == 'dropped':
                assert (self.ran[i], self.told[i]) == (0, 0), f'{self.where()}: dropped job {i} ran {self.ran[i]} times, told {self.told[i]}'
                continue
            assert j.state == 'done', f'{self.where()}: job {i} never ran'
            assert self.told[i] == 1, f'{self.where()}: job {i} ended, and its caller heard of it {self.told[i]} times'
            if isinstance(j.error, Landed): assert self.ran[i] <= 1, f'{self.where()}: job {i} ran {self.ran[i]} times'
            elif isinstance(j.error, WorkersExhausted): assert self.ran[i] == 0, f'{self.where()}: job {i} ran, yet could not start'
            else: assert (self.ran[i], j.error, j.value) == (1, None, 2 * i), f'{self.where()}: job {i}: {self.ran[i]} runs, {j.error!r}, {j.value!r}'

    def batch(self, ids): self.check({i: self.submit(i) for i in ids})

    def settled(self):
        "Then the pool still runs every job, holds no slot, and its counts match its threads"
        self.gate.set()
        self.batch(range(1000, 1006))
        pool, deadline = self.pool, time.monotonic() + 5
        while pool.running and time.monotonic() < deadline: time.sleep(0.001)
        time.sleep(0.01)  # (a thread counts itself idle just after its listener hears)
        with pool.lock:
            assert (pool.running, len(pool.ready), len(pool.pending)) == (0, 0, 0), f'{self.where()}: {pool.running} running, {len(pool.ready)} ready, {len(pool.pending)} pending'
            waiting, alive = sum(w.job is None for w in pool.workers), len(_pool_threads(pool))
            assert pool.idle == waiting, f'{self.where()}: {pool.idle} idle, but {waiting} threads wait'
            assert alive == pool.threads, f'{self.where()}: {alive} threads alive, {pool.threads} counted'
        pool.IDLE_SECS = 0  # its threads end
        for _ in range(alive + 1): pool.wake.put(None)

def batches(r: Run):
    r.batch(range(4))  # 3 run, 1 waits for a slot
    time.sleep(0.01)  # their threads wait, idle
    r.batch([4])  # one of them wakes for it
    time.sleep(0.01)
    r.batch(range(5, 10))

def nested(r: Run):
    "A tool that submits to the pool itself, as a batch inside a tool does: the pool's caller code runs in a worker thread"
    inner = {}
    def outer(k: int) -> int:
        with r.lock: r.ran[k] += 1
        inner[k] = r.submit(100 + k)
        deadline = time.monotonic() + 5
        while r.told[100 + k] == 0 and time.monotonic() < deadline: time.sleep(0.0005)
        return k * 2
    for k in range(3):
        job = r.submit(k, fn=lambda k=k: outer(k))
        r.check({k: job})
        if job.error is None: r.check({100 + k: inner[k]})  # (else `Landed` cut its submit short: what it queued runs unheard of)
        time.sleep(0.005)  # its threads wait, idle

def abandon(r: Run):
    "Callers that stop waiting for running jobs: their slots go to the next"
    jobs = {i: r.submit(i, wait=True) for i in range(4)}  # 3 run, 1 waits for a slot
    time.sleep(0.005)
    for i in (0, 1): r.pool.abandon(jobs[i])
    jobs.update({i: r.submit(i) for i in range(4, 8)})
    time.sleep(0.005)
    r.gate.set()
    r.check(jobs)

def drop(r: Run):
    "A caller that drops a batch: the jobs still waiting for a slot never start, the others run on"
    jobs = {i: r.submit(i, wait=True) for i in range(8)}  # 3 run, 5 wait for a slot
    time.sleep(0.005)
    r.pool.drop([jobs[i] for i in range(1, 6)])
    jobs.update({i: r.submit(i) for i in range(8, 12)})
    time.sleep(0.005)
    r.gate.set()
    r.check(jobs, dropped=range(1, 6))

def idle(r: Run):
    "Threads that end idle between batches"
    r.pool.IDLE_SECS = 0.003
    batches(r)

def exhausted(r: Run):
    "A pool at its straggler limit (1 slot, 4 stragglers): stuck jobs abandoned, a resize up and down, a job that can't start"
    def started(*ids):
        deadline = time.monotonic() + 5
        while any(r.ran[i] == 0 and jobs[i].state != 'done' for i in ids) and time.monotonic() < deadline: time.sleep(0.0005)
    jobs = {i: r.submit(i, wait=True) for i in range(3)}
    for i in range(3):
        started(i)
        r.pool.abandon(jobs[i])
    r.pool.resize(2)
    jobs[3], jobs[4] = r.submit(3, wait=True), r.submit(4, wait=True)
    started(3, 4)
    r.pool.abandon(jobs[4])  # 5 threads busy, 1 slot counted
    jobs[5] = r.submit(5)  # waits for a slot
    time.sleep(0.005)
    r.pool.resize(1)
    r.pool.limit = 4  # (stragglers in all: fewer than are abandoned, so the next can't start)
    r.pool.abandon(jobs[3])
    jobs[6] = r.submit(6)
    time.sleep(0.005)
    r.gate.set()
    r.check(jobs)

KINDS = {'batches': (3, batches), 'nested': (3, nested), 'abandon': (3, abandon), 'drop': (3, drop), 'idle': (3, idle),
         'exhausted': (1, exhausted)}

def scenario(kind: str, target: int) -> Injector:
    size, steps = KINDS[kind]
    r = Run(size, target)
    with Injector(target) as r.inj: steps(r)
    r.settled()
    return r.inj

def main(kinds: list):
    for kind in kinds:
        target = 1
        while (inj := scenario(kind, target)).fired: target += 1
        print(kind, target - 1, inj.seen, flush=True)  # how many places were hit, one run each; how many the last run passed

if __name__ == '__main__': main(sys.argv[1:] or list(KINDS))
