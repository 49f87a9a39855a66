"""`core._run`'s rare branches, each for what it exists for: stopping a call whose loop closed already, a loop holder of
another process leaving its loop alone, a listener that fails not ending its worker thread, an error handed back, the
pool after a fork, and the system refusing a new thread (the call fails, the next one still runs). Each test uses a pool
of its own, never the process's."""
import asyncio, gc, os, threading, time

import pytest

from funccall.core import _run
from funccall.core._run import _Cancellable, _Loop, _Workers

def _wait(cond, secs: float = 5) -> bool:
    end = time.monotonic() + secs
    while not cond() and time.monotonic() < end: time.sleep(0.005)
    return cond()

def test_stopping_a_call_whose_loop_closed_already_is_quiet():
    "The waiting thread gives up just as the other thread's loop closed: nothing of the call runs on, nothing is raised"
    loop = asyncio.new_event_loop()
    c = _Cancellable(asyncio.sleep(0))
    assert loop.run_until_complete(c.run()) is None
    loop.close()
    c.stop()
    assert c.stopped

def test_a_call_stopped_before_it_starts_never_runs_and_is_not_left_unawaited():
    ran = []
    async def tool(): ran.append(1)
    c = _Cancellable(coro := tool())
    c.stop()
    with pytest.raises(asyncio.CancelledError): asyncio.run(c.run())
    assert ran == [] and coro.cr_frame is None  # (closed: Python has nothing to warn of)

def test_a_loop_holder_of_another_process_leaves_its_loop_alone():
    "In a forked child, the parent's loop holders are dropped: its loop (sharing the parent's selector) stays open and held"
    loop = asyncio.new_event_loop()
    try:
        h = _Loop(loop, os.getpid() + 1)  # (made by another process: the parent, as a forked child sees it)
        del h; gc.collect()
        assert not loop.is_closed() and _run._opened.get(id(loop)) is loop
    finally:
        _run._opened.pop(id(loop), None); loop.close()
    mine = asyncio.new_event_loop()
    h = _Loop(mine, os.getpid())
    del h; gc.collect()
    assert mine.is_closed() and id(mine) not in _run._opened

def test_a_failing_listener_does_not_end_its_worker_thread():
    "A job's listener raising (its loop closed meanwhile) is swallowed: the thread serves the next call"
    w, heard = _Workers(1), []
    def broken(job): raise RuntimeError('loop closed')
    w.submit(lambda: 1, broken)
    assert _wait(lambda: w.idle == 1)
    w.submit(lambda: threading.current_thread().name, heard.append)
    assert _wait(lambda: heard) and heard[0].result() == 'funccall-tool' and w.threads == 1

def test_a_calls_error_is_raised_to_whoever_takes_its_result():
    w, heard = _Workers(1), []
    w.submit(lambda: 1 / 0, heard.append)
    assert _wait(lambda: heard)
    assert isinstance(heard[0].exception(), ZeroDivisionError)
    with pytest.raises(ZeroDivisionError): heard[0].result()

def test_after_a_fork_the_pool_starts_empty_and_works():
    "A forked child has none of the parent's threads: counts zeroed (a call queued for a parent's idle thread would wait for ever)"
    w, heard = _Workers(2), []
    w.submit(lambda: 1, heard.append)
    assert _wait(lambda: w.idle == 1)
    w.forked()
    assert (w.threads, w.idle, w.running, w.stragglers, len(w.pending)) == (0, 0, 0, 0, 0)
    w.submit(lambda: 2, heard.append)
    assert _wait(lambda: len(heard) == 2) and heard[1].result() == 2

def test_a_thread_the_system_wont_start_fails_its_call_and_frees_its_slot(monkeypatch):
    "`can't start new thread`: that call fails with it, its slot goes to the next call, which runs once threads start again"
    start, refuse, heard = threading.Thread.start, [True], []
    def start_or_refuse(self):
        if self.name == 'funccall-tool' and refuse[0]: raise RuntimeError("can't start new thread")
        return start(self)
    monkeypatch.setattr(threading.Thread, 'start', start_or_refuse)
    w = _Workers(1)
    w.submit(lambda: 'first', heard.append)
    assert len(heard) == 1 and str(heard[0].exception()) == "can't start new thread"
    assert (w.threads, w.running) == (0, 0)
    refuse[0] = False
    w.submit(lambda: 'second', heard.append)
    assert _wait(lambda: len(heard) == 2) and heard[1].result() == 'second'
