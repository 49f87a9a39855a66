"""An exception raised into a worker thread from outside, landing at each place in the pool's own code where one can:
run as a script (`python tests/pool_landing.py`) by `test_pool_faults.py`, in a process of its own and untraced.

CPython checks for such an exception where a thread's code enters a function, just after a call returns, and at a jump
back (its eval-breaker checks). `Injector` counts those places as the pool's worker threads pass them, on each Python's
own instruction stream (an opcode trace to 3.11, `sys.monitoring` from 3.12), and raises `Landed` at the `target`th;
`scenario(target)` runs jobs through a fresh pool so, and checks that none was lost or run twice and that the pool's
counts are right after. `main` takes every target in turn, until one is past the last place a run passes."""
import collections, dis, sys, threading, time
from funccall import _async_exc, _run
from funccall._run import _Workers

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
        self.target, self.seen, self.fired, self.prev, self.lock = target, 0, False, {}, threading.Lock()

    def step(self, frame, offset: int):
        "Before the instruction at `offset` of `frame` (pool code, in a worker thread) runs"
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
            self.fired = True
            raise Landed()

    def __enter__(self):
        if sys.version_info >= (3, 12):  # (3.12.1 crashes when a `settrace` opcode event raises)
            M = sys.monitoring
            M.use_tool_id(M.DEBUGGER_ID, 'pool fault test')
            def on(code, offset):
                if threading.current_thread().name == 'funccall-tool' and self.active: self.step(sys._getframe(1), offset)
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

def scenario(target: int) -> Injector:
    pool = _Workers(3)
    pool.IDLE_SECS = 10.0  # (longer than a batch waits: a job left in `ready` is not taken by a thread ending idle)
    ran, told, lock = collections.Counter(), collections.Counter(), threading.Lock()
    def work(i):
        with lock: ran[i] += 1
        return i * 2
    def batch(ids):
        def heard(job, i):
            with lock: told[i] += 1
        jobs = {i: pool.submit(lambda i=i: work(i), lambda job, i=i: heard(job, i)) for i in ids}
        deadline = time.monotonic() + 5
        while any(told[i] == 0 for i in jobs) and time.monotonic() < deadline: time.sleep(0.0005)
        for i, j in jobs.items():
            assert j.state == 'done', f'landing point {target}: job {i} never ran'
            assert told[i] == 1, f'landing point {target}: job {i} ended, and its caller heard of it {told[i]} times'
            if isinstance(j.error, Landed): assert ran[i] <= 1, f'landing point {target}: job {i} ran {ran[i]} times'
            else: assert (ran[i], j.error, j.value) == (1, None, 2 * i), f'landing point {target}: job {i}: {ran[i]} runs, {j.error!r}, {j.value!r}'
    with Injector(target) as inj:
        batch(range(4))  # 3 run, 1 waits for a slot
        time.sleep(0.01)  # their threads wait, idle
        batch([4])  # one of them wakes for it
        time.sleep(0.01)
        batch(range(5, 10))
    batch(range(10, 16))  # then the pool still runs every job
    deadline = time.monotonic() + 5
    while pool.running and time.monotonic() < deadline: time.sleep(0.001)
    with pool.lock:
        live = [w for w in pool.workers if w.thread.is_alive()]
        assert (pool.running, len(pool.ready), len(pool.pending)) == (0, 0, 0), f'landing point {target}: {pool.running} running, {len(pool.ready)} ready, {len(pool.pending)} pending'
        assert len(live) == pool.threads and 0 <= pool.idle <= pool.threads, f'landing point {target}: {len(live)} threads live of {pool.threads}, {pool.idle} idle'
    pool.IDLE_SECS = 0  # its threads end
    for _ in range(pool.threads): pool.wake.put(None)
    return inj

def main():
    target = 1
    while (inj := scenario(target)).fired: target += 1
    print(target - 1, inj.seen)  # how many places were hit, one run each; how many the last run passed

if __name__ == '__main__': main()
