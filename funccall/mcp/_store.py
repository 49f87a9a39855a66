"""Where a served MCP task's record lives (the 2026-07-28 tasks extension, `io.modelcontextprotocol/tasks`), and where the
confirmation states' single-use record lives: in this process's memory (the default, one process), or in Redis, so every
worker behind one address answers for every task and takes each answer once.

A task record is a JSON object: the `Task` as `tasks/get` returns it (taskId, status, createdAt, lastUpdatedAt, ttlMs,
pollIntervalMs, and once done `result` or `error`), plus `owner`, the authenticated caller who started it (None without
OAuth). A record leaves `working` exactly once (`finish`): the first of completion, failure and cancellation wins, in every
process at once (in Redis, by a script that runs atomically). Records expire `ttlMs` after creation.

The store's methods are synchronous and short (one round trip to Redis on loopback or a LAN): the server calls them on
its event loop.
"""
from __future__ import annotations

import json, threading, time

__all__ = ['TERMINAL', 'TasksFull', 'MemoryTaskStore', 'RedisStore']

TERMINAL = ('completed', 'failed', 'cancelled')  # a task in one of these never changes again

class TasksFull(RuntimeError):
    "The store holds as many tasks as it may: a new one is refused (the call is an error result) until some expire"

class MemoryTaskStore:
    """Task records in this process's memory, each until it expires: for one process (stdio, or HTTP with one worker).
    When full, the oldest finished record makes room (a flood of quick tasks must not lock every other client out until
    they expire); only a store full of running tasks refuses a new one"""
    def __init__(self, max_tasks: int = 10_000):  # the most records kept at once
        self.max_tasks, self._tasks, self._lock = max_tasks, {}, threading.Lock()  # tid -> (expiry, status, record as JSON)

    def _purge(self, now: float) -> None:
        for k in [k for k, (exp, *_) in self._tasks.items() if exp < now]: del self._tasks[k]

    def _evict_finished(self) -> None:
        "Drop the oldest finished record, if any (records stay in the order they were made)"
        if k := next((k for k, (_, status, _) in self._tasks.items() if status in TERMINAL), None): del self._tasks[k]

    def create(self, tid: str, rec: dict, ttl: float) -> None:
        "Keep `rec` under task id `tid` for `ttl` seconds"
        now = time.time()
        with self._lock:
            if len(self._tasks) >= self.max_tasks: self._purge(now)
            if len(self._tasks) >= self.max_tasks: self._evict_finished()
            if len(self._tasks) >= self.max_tasks: raise TasksFull(f"this server holds {self.max_tasks} running tasks already: try again later")
            self._tasks[tid] = (now + ttl, rec['status'], json.dumps(rec))

    def get(self, tid: str) -> dict | None:
        "The record of task `tid`, None when there is none (never created, expired, or made room for)"
        with self._lock:
            exp, _, rec = self._tasks.get(tid, (0, None, None))
            return json.loads(rec) if rec is not None and exp >= time.time() else None

    def finish(self, tid: str, rec: dict) -> bool:
        "Replace the record of `tid` with `rec` (a terminal one) if it is still working: whether it was"
        with self._lock:
            exp, status, _ = self._tasks.get(tid, (0, None, None))
            if status != 'working' or exp < time.time(): return False
            self._tasks[tid] = (exp, rec['status'], json.dumps(rec))
            return True

# KEYS[1]: the task's key; ARGV[1]: the new record (JSON); ARGV[2]: its status. Only a working task changes, and only once.
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'task', ARGV[1])
return 1
"""

class RedisStore:
    """Task records and used confirmation nonces in Redis, shared by every worker that uses the same Redis and `prefix`:
    pass it to `mk_server(store=...)` (or `funccall mcp serve --redis URL`). Needs the `redis` client: `pip install 'funccall[redis]'`"""
    def __init__(self,
        url: str = 'redis://127.0.0.1:6379/0',  # the Redis server; or pass `client=`
        prefix: str = 'funccall:mcp:',          # put before every key, so several servers share one Redis
        client=None,                            # a `redis.Redis` to use instead of connecting to `url`
    ):
        if client is None:
            try: import redis
            except ImportError as e: raise ImportError("RedisStore needs the redis client: pip install 'funccall[redis]'") from e
            client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10)
        self.redis, self.prefix = client, prefix
        self._finish = client.register_script(_FINISH)

    def _key(self, kind: str, k: str) -> str: return f'{self.prefix}{kind}:{k}'

    def add(self, nonce: str, expiry: float) -> bool:
        "Record a confirmation state's nonce until `expiry` (wall-clock seconds): False when any worker recorded it before"
        ms = max(1, int((expiry - time.time()) * 1000))
        return bool(self.redis.set(self._key('nonce', nonce), 1, nx=True, px=ms))

    def create(self, tid: str, rec: dict, ttl: float) -> None:
        k = self._key('task', tid)
        with self.redis.pipeline() as p:  # one transaction: the record is whole, with its expiry, before the client hears of it
            p.hset(k, mapping={'status': rec['status'], 'task': json.dumps(rec)}).pexpire(k, max(1, int(ttl * 1000))).execute()

    def get(self, tid: str) -> dict | None:
        rec = self.redis.hget(self._key('task', tid), 'task')
        return None if rec is None else json.loads(rec)

    def finish(self, tid: str, rec: dict) -> bool:
        return bool(self._finish(keys=[self._key('task', tid)], args=[json.dumps(rec), rec['status']]))
