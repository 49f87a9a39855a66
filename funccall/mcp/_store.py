"""Where a served MCP task's record lives (the 2026-07-28 tasks extension, `io.modelcontextprotocol/tasks`), and where the
confirmation states' single-use record lives: in this process's memory (the default, one process), or in Redis, so every
worker behind one address answers for every task and takes each answer once.

A task record is a JSON object: the `Task` as `tasks/get` returns it (taskId, status, createdAt, lastUpdatedAt, ttlMs,
pollIntervalMs, and once done `result` or `error`), plus `owner`, the authenticated caller who started it (None without
OAuth), and `client`, whose share of the store it counts against (the owner, else the caller's address). A record leaves
`working` exactly once (`finish`): the first of completion, failure, cancellation and its worker's loss wins, in every
process at once (in Redis, by scripts that run atomically). Records expire `ttlMs` after creation. The store keeps at
most `max_tasks` records, `per_client` of each client: past either, the oldest finished record makes room, and only a
store (or a client's share) full of running tasks refuses a new one (`TasksFull`).

Every method is a coroutine. `RedisStore` talks to Redis through its asyncio client (one per event loop), each call
bounded by `timeout`: a stalled, full or unreachable Redis is a `StoreError` saying so by then, and never holds the
event loop, so a call that needs no store answers as fast as ever.

Leases: a worker running a task renews the task's lease (`beat`, every `_POLL` s of the server); a task still `working`
whose lease lapsed (`lease` s: its worker was killed, or lost Redis that long) is read as `failed`, saying why, by
whichever worker reads it first. An idempotent tool's task is instead run again by that worker, at most `DELIVERIES`
times in all: its job (tool, arguments, protocol version) waits in a Redis Stream's consumer group, pending on the
worker running it, and moves to the reader's consumer by XCLAIM, which counts the deliveries.

Epochs: a confirmation state carries the store's `epoch()`, and `spend` takes its nonce only while the store is in that
epoch, atomically. Redis's epoch is its `run_id` (new at each start), its replication id (new at each promotion of a
replica: a failover, and a fail-back to the old primary, whose writes since the failover the new one never had) and a
token kept in Redis (new after a flush): after a restart, with or without persistence, a failover or a flush, every state
sealed before is refused, never taken twice. A nonce is taken only while the state is unexpired by Redis's clock, and
kept until then by the same clock (`PXAT`), so workers whose clocks differ agree. Redis 6.2 or later.
A Redis that may evict keys (any `maxmemory-policy` but `noeviction`) could forget a used nonce: it takes none.
"""
from __future__ import annotations

import asyncio, collections, json, logging, secrets, threading, time
from typing import Any

from ..core._helpdoc import add_param_docs

__all__ = ['TERMINAL', 'STORE_ERROR', 'WORKER_LOST', 'TasksFull', 'StoreError', 'MemoryTaskStore', 'LocalNonces', 'RedisStore']

_log = logging.getLogger('funccall.mcp')
TERMINAL = ('completed', 'failed', 'cancelled')  # a task in one of these never changes again
LOST = "The worker running this task stopped (its lease lapsed) before the task ended: start it again"
# JSON-RPC codes of implementation-defined server errors, apart from those the MCP SDK gives meanings
# (-32000 connection closed, -32001 request timeout): a client must not read the store's failure as its own connection's
STORE_ERROR = -32010  # the shared store can't answer now: unreachable, stalled, full, or evicting keys (the message says which)
WORKER_LOST = -32011  # a task's error: its worker is gone
DELIVERIES = 3  # the most times an idempotent tool's task runs in all: a worker gone under it twice more, it is failed

class TasksFull(RuntimeError):
    "The store holds as many tasks as it may (in all, or of this client): a new one is refused until some end or expire"

class StoreError(RuntimeError):
    "The shared store can't answer now (unreachable, too slow, full, evicting keys): the message says what to do"

class MemoryTaskStore:
    """Task records in this process's memory, each until it expires: for one process (stdio, or HTTP with one worker),
    whose own death ends its tasks with it (no lease to keep). Epoch: None (states die with the process's secret)"""
    _tasks: dict[str, tuple[Any, ...]]  # tid -> (expiry, status, client, record as JSON)
    _of: collections.Counter[str | None]  # client -> its records
    def __init__(self,
        max_tasks: int = 10_000,  # the most records kept at once
        per_client: int = 1_000,  # the most records of one client (`rec['client']`) kept at once
    ):
        self.max_tasks, self.per_client, self._lock = max_tasks, per_client, threading.Lock()
        self._tasks, self._of = {}, collections.Counter()  # tid -> (expiry, status, client, record as JSON); client -> records

    def _drop(self, k: str) -> None: self._of[self._tasks.pop(k)[2]] -= 1

    def _make_room(self, client, now: float) -> None:
        "Drop expired records, then the oldest finished ones while the client's share or the store is full"
        for k in [k for k, (exp, *_) in self._tasks.items() if exp < now]: self._drop(k)
        done = [k for k, (_, st, _, _) in self._tasks.items() if st in TERMINAL]  # oldest first: records stay in the order made
        for k in [k for k in done if self._tasks[k][2] == client]:
            if self._of[client] < self.per_client: break
            self._drop(k)
        for k in done:
            if len(self._tasks) < self.max_tasks: break
            if k in self._tasks: self._drop(k)

    async def create(self, tid: str, rec: dict, ttl: float, job: dict | None = None) -> None:
        """Keep `rec` under task id `tid` for `ttl` seconds; `TasksFull` when the store, or the client's share, is full of running
        tasks. `job` (an idempotent tool's: what to run again if this worker goes) has no use in one process"""
        now, client = time.time(), rec.get('client')
        with self._lock:
            if len(self._tasks) >= self.max_tasks or self._of[client] >= self.per_client: self._make_room(client, now)
            if self._of[client] >= self.per_client:
                raise TasksFull(f"you run {self.per_client} tasks on this server already: wait for one to end")
            if len(self._tasks) >= self.max_tasks: raise TasksFull(f"this server holds {self.max_tasks} running tasks already: try again later")
            self._tasks[tid] = (now + ttl, rec['status'], client, json.dumps(rec))
            self._of[client] += 1

    async def get(self, tid: str) -> dict | None:
        """The record of task `tid`, None when there is none (never created, expired, or made room for). A record with `redo`
        (the `job` its worker left) is this worker's now, to run again"""
        with self._lock:
            exp, _, _, rec = self._tasks.get(tid, (0, None, None, None))
            return json.loads(rec) if rec is not None and exp >= time.time() else None

    async def beat(self, tid: str) -> str | None:
        "The status of task `tid` (None: gone), its lease renewed while it is working (here: this process lives, so it holds)"
        return (await self.get(tid) or {}).get('status')

    async def finish(self, tid: str, rec: dict) -> bool:
        "Replace the record of `tid` with `rec` (a terminal one) if it is still working: whether it was"
        with self._lock:
            exp, status, client, _ = self._tasks.get(tid, (0, None, None, None))
            if status != 'working' or exp < time.time(): return False
            self._tasks[tid] = (exp, rec['status'], client, json.dumps(rec))
            return True

    async def epoch(self) -> str | None: return None

class LocalNonces:
    """The used nonces of a store with `add(nonce, expiry) -> bool` (`NonceStore`, or `mk_server(state_store=...)`) as the
    server spends them: in one epoch (None) for ever, so its single use is as good as its memory"""
    def __init__(self, store): self.store = store  # has `add(nonce, expiry) -> bool`, False for one seen before

    async def epoch(self) -> None: return None

    async def spend(self, nonce: str, expiry: float, epoch) -> str: return 'ok' if self.store.add(nonce, expiry) else 'used'

# Redis's keys, below the prefix: task:ID (a hash: status, task JSON, client, job), lease:ID (while its worker lives),
# client:KEY and tasks (sorted sets of task ids by expiry, ms), jobs (a stream, group 'workers': idempotent tasks' jobs),
# nonce:N (a used state), epoch (a token)

_NOW = "local t = redis.call('TIME'); local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"

# KEYS: the task, its client's set, every task's set, its lease, the jobs' stream. ARGV: the record, ttl ms, per client, in all,
# lease ms, prefix, the job to run again ('' for none), this worker's consumer name. Past a bound, the oldest finished (or
# orphaned) record of the set makes room: at most 100 looked at. A job goes to the stream and at once to this worker's
# consumer (its pending list), in this one atomic step: no entry is ever left for another worker to read as new
# (the lease first: a Redis at maxmemory refuses a script's first write, and lets every later one through). Consumers holding
# no job leave the group (a live worker rejoins by its next read): gone workers' names never pile up. The stream outlives
# the records of its jobs (their ttl from its latest job), then expires with the group: only the epoch's token never does
_CREATE = _NOW + """
redis.call('SET', KEYS[4], 1, 'PX', ARGV[5])
local pre = ARGV[6]
local function ended(tid)
  return redis.call('HGET', pre .. 'task:' .. tid, 'status') ~= 'working' or redis.call('EXISTS', pre .. 'lease:' .. tid) == 0
end
local function room(set, most)
  redis.call('ZREMRANGEBYSCORE', set, '-inf', now)
  if redis.call('ZCARD', set) < most then return true end
  for _, tid in ipairs(redis.call('ZRANGE', set, 0, 99)) do
    if ended(tid) then
      local whose = redis.call('HGET', pre .. 'task:' .. tid, 'client')
      if whose then redis.call('ZREM', whose, tid) end
      redis.call('ZREM', KEYS[3], tid)
      local job = redis.call('HGET', pre .. 'task:' .. tid, 'job')
      if job then redis.call('XACK', KEYS[5], 'workers', job); redis.call('XDEL', KEYS[5], job) end
      redis.call('DEL', pre .. 'task:' .. tid, pre .. 'lease:' .. tid)
      if redis.call('ZCARD', set) < most then return true end
    end
  end
  return false
end
if not room(KEYS[2], tonumber(ARGV[3])) then redis.call('DEL', KEYS[4]); return 'client' end
if not room(KEYS[3], tonumber(ARGV[4])) then redis.call('DEL', KEYS[4]); return 'full' end
local ttl, tid = tonumber(ARGV[2]), string.sub(KEYS[1], #pre + 6)
redis.call('HSET', KEYS[1], 'status', 'working', 'task', ARGV[1], 'client', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ttl)
if ARGV[7] ~= '' then
  if redis.call('EXISTS', KEYS[5]) == 0 then redis.call('XGROUP', 'CREATE', KEYS[5], 'workers', '$', 'MKSTREAM') end
  local id = redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*', 'job', ARGV[7])
  redis.call('XREADGROUP', 'GROUP', 'workers', ARGV[8], 'COUNT', 1, 'STREAMS', KEYS[5], '>')
  redis.call('HSET', KEYS[1], 'job', id)
  for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[5], 'workers')) do
    local f = {}
    for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
    if f['pending'] == 0 then redis.call('XGROUP', 'DELCONSUMER', KEYS[5], 'workers', f['name']) end
  end
  if redis.call('PTTL', KEYS[5]) < ttl then redis.call('PEXPIRE', KEYS[5], ttl) end
end
for _, set in ipairs({KEYS[2], KEYS[3]}) do
  redis.call('ZADD', set, now + ttl, tid)
  if redis.call('PTTL', set) < ttl then redis.call('PEXPIRE', set, ttl) end
end
return 'ok'
"""

# KEYS: the task, its lease, the jobs' stream. ARGV: now (ISO), the reason, its code, this worker's consumer, lease ms, most
# deliveries. {record, job to run here}. A working task whose lease lapsed is failed here, once; one with a job delivered
# fewer than `most` times is claimed instead (XCLAIM: the group's pending entry moves to this worker, its count + 1)
_GET = """
local rec = redis.call('HGET', KEYS[1], 'task')
if not rec then return {false, false} end
if redis.call('HGET', KEYS[1], 'status') == 'working' and redis.call('EXISTS', KEYS[2]) == 0 then
  local job = redis.call('HGET', KEYS[1], 'job')
  if job then
    local p = redis.call('XPENDING', KEYS[3], 'workers', job, job, 1)[1]
    if p and p[4] < tonumber(ARGV[6]) then
      local got = redis.call('XCLAIM', KEYS[3], 'workers', ARGV[4], 0, job)[1]
      if got and got[2] then
        redis.call('SET', KEYS[2], 1, 'PX', ARGV[5])
        return {rec, got[2][2]}
      end
    end
    redis.call('XACK', KEYS[3], 'workers', job)
    redis.call('XDEL', KEYS[3], job)
  end
  local t = cjson.decode(rec)
  t.status, t.statusMessage, t.lastUpdatedAt = 'failed', ARGV[2], ARGV[1]
  t.error = {code = tonumber(ARGV[3]), message = ARGV[2]}
  rec = cjson.encode(t)
  redis.call('HSET', KEYS[1], 'status', 'failed', 'task', rec)
end
return {rec, false}
"""

# KEYS: the task, its lease. ARGV: lease ms. The status; a working task's lease renewed
_BEAT = """
local st = redis.call('HGET', KEYS[1], 'status')
if st == 'working' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('SET', KEYS[2], 1, 'PX', ARGV[1]) end
return st
"""

# KEYS: the task, its lease, the jobs' stream; ARGV: the new record (JSON), its status. Only a working task with its lease
# changes, and only once; its job, if any, is acknowledged and deleted
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'working' or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'task', ARGV[1])
redis.call('DEL', KEYS[2])
local job = redis.call('HGET', KEYS[1], 'job')
if job then redis.call('XACK', KEYS[3], 'workers', job); redis.call('XDEL', KEYS[3], job) end
return 1
"""

# KEYS: the epoch's token, [the nonce]. ARGV: a new token (used if there is none), [the state's epoch, its expiry (Unix ms)].
# The epoch; with a nonce: 'ok' (taken now, kept until the expiry), 'used' (taken before), 'stale' (the state is of another
# epoch) or 'expired' (by Redis's clock, which alone decides how long a nonce is kept)
_EPOCH = _NOW + """
local info = redis.call('INFO', 'server', 'memory', 'replication')
local policy = string.match(info, 'maxmemory_policy:([%w-]+)')
if policy ~= 'noeviction' then return {'evicts', policy} end
local token = redis.call('GET', KEYS[1])
if not token then redis.call('SET', KEYS[1], ARGV[1]); token = ARGV[1] end
local epoch = string.match(info, 'run_id:(%w+)') .. ':' .. string.match(info, 'master_replid:(%w+)') .. ':' .. token
if #KEYS == 1 then return {'epoch', epoch} end
if epoch ~= ARGV[2] then return {'stale', epoch} end
if tonumber(ARGV[3]) <= now then return {'expired', epoch} end
if redis.call('SET', KEYS[2], 1, 'NX', 'PXAT', ARGV[3]) then return {'ok', epoch} end
return {'used', epoch}
"""

class RedisStore:
    """Task records and used confirmation nonces in Redis, shared by every worker that uses the same Redis and `prefix`:
    pass it to `mk_server(store=...)` (or `funccall mcp serve --redis URL`). Needs the `redis` client: `pip install 'funccall[redis]'`.
    One Redis server (its scripts name keys they compute: not Redis Cluster)"""
    url: str            # the Redis server
    prefix: str         # put before every key
    timeout: float      # seconds any one call to Redis may take
    max_tasks: int      # the most task records kept at once
    per_client: int     # the most task records of one client kept at once
    lease: float        # seconds a task outlives its worker's last sign of life
    consumer: str       # this worker's name in the stream's group
    _clients: dict[Any, dict[str, Any]]  # event loop -> its client's scripts
    def __init__(self,
        url: str = 'redis://127.0.0.1:6379/0',  # the Redis server
        prefix: str = 'funccall:mcp:',          # put before every key, so several servers share one Redis
        timeout: float = 2.0,                   # seconds any one call to Redis may take, connecting included
        max_tasks: int = 10_000,                # the most task records kept at once, across every worker
        per_client: int = 100,                  # the most task records of one client kept at once, across every worker
        lease: float = 15.0,                    # seconds a task outlives its worker's last sign of life before it is read as failed
    ):
        try: from redis.asyncio.connection import parse_url
        except ImportError as e: raise ImportError("RedisStore needs the redis client: pip install 'funccall[redis]'") from e
        try: parse_url(url)  # a malformed one now, not as every call's failure; its text never, as it may hold a password
        except ValueError as e: raise ValueError(f"RedisStore: the Redis URL is malformed ({e}): redis://[:PASSWORD@]HOST:PORT/DB") from None
        self.url, self.prefix, self.timeout, self.max_tasks, self.per_client, self.lease = url, prefix, timeout, max_tasks, per_client, lease
        self._clients, self.consumer = {}, secrets.token_hex(8)  # event loop -> its client's scripts; this worker's name in the group

    def __repr__(self) -> str: return f'RedisStore(prefix={self.prefix!r})'  # never the URL: it may hold a password

    def _key(self, kind: str, k: str) -> str: return f'{self.prefix}{kind}:{k}'

    def _scripts(self) -> dict:
        "This event loop's client's scripts (an asyncio client serves the loop it was made on)"
        import redis.asyncio as aredis
        loop = asyncio.get_running_loop()
        if (got := self._clients.get(loop)) is None:
            for old in [lp for lp in self._clients if lp.is_closed()]: del self._clients[old]
            c = aredis.Redis.from_url(self.url, socket_timeout=self.timeout, socket_connect_timeout=self.timeout)
            got = self._clients[loop] = {nm: c.register_script(src) for nm, src in
                                         (('create', _CREATE), ('get', _GET), ('beat', _BEAT), ('finish', _FINISH), ('epoch', _EPOCH))}
        return got

    async def _call(self, script: str, keys: list, args: list):
        "Run one of the scripts within `timeout`: its reply, or `StoreError` saying what went wrong and what to do"
        import redis
        try: return await asyncio.wait_for(self._scripts()[script](keys=keys, args=args), self.timeout)
        except (asyncio.TimeoutError, redis.TimeoutError):
            raise StoreError(f"the server's shared store (Redis) did not answer within {self.timeout:g} s: try again in a few seconds") from None
        except redis.AuthenticationError:  # (a ConnectionError) its words name no password; neither do these
            _log.error("Redis refused the credentials in the server's Redis URL")
            raise StoreError("the server's shared store (Redis) refused the credentials it was given "
                             "(its operator: check the password in the Redis URL)") from None
        except redis.ReadOnlyError:  # the URL leads to a replica: a failover moved the primary, or it is misconfigured
            _log.error("Redis at the server's Redis URL is a read-only replica: point it at the primary")
            raise StoreError("the server's shared store (Redis) is a read-only replica: nothing was recorded; try again later "
                             "(its operator: point the server at Redis's primary)") from None
        except redis.ResponseError as e:
            if 'maxmemory' not in str(e):  # (the reply is 'OOM command not allowed when used memory > 'maxmemory'...')
                _log.error('Redis refused a script: %s', e)  # a reply of Redis's own (MISCONF, BUSY...): no URL in it
                raise StoreError(f"the server's shared store (Redis) refused it ({str(e).split(' ', 1)[0]}): nothing was recorded; "
                                 "try again later (its operator: see the server's log)") from None
            _log.error('Redis is full (maxmemory, noeviction): raise its maxmemory, or lower task_ttl')
            raise StoreError("the server's shared store (Redis) is full: nothing was recorded; try again later "
                             "(its operator: raise Redis's maxmemory)") from None
        except redis.RedisError as e:
            _log.warning('Redis failed: %s: %s', type(e).__name__, e)
            raise StoreError("the server's shared store (Redis) is unreachable: try again in a few seconds") from None

    async def create(self, tid: str, rec: dict[str, Any], ttl: float, job: dict[str, Any] | None = None) -> None:
        got = await self._call('create', [self._key('task', tid), self._key('client', str(rec.get('client'))), f'{self.prefix}tasks',
                                          self._key('lease', tid), f'{self.prefix}jobs'],
                               [json.dumps(rec), max(1, int(ttl * 1000)), self.per_client, self.max_tasks, int(self.lease * 1000), self.prefix,
                                '' if job is None else json.dumps(job), self.consumer])
        if got == b'client': raise TasksFull(f"you hold {self.per_client} tasks on this server already: wait for one to end")
        if got == b'full': raise TasksFull(f"this server holds {self.max_tasks} running tasks already: try again later")

    async def get(self, tid: str) -> dict[str, Any] | None:
        now = time.strftime('%Y-%m-%dT%H:%M:%S.000Z', time.gmtime())
        rec, job = await self._call('get', [self._key('task', tid), self._key('lease', tid), f'{self.prefix}jobs'],
                                    [now, LOST, WORKER_LOST, self.consumer, int(self.lease * 1000), DELIVERIES])
        return None if rec is None else {**json.loads(rec), **({'redo': json.loads(job)} if job else {})}

    async def beat(self, tid: str) -> str | None:
        st = await self._call('beat', [self._key('task', tid), self._key('lease', tid)], [int(self.lease * 1000)])
        return None if st is None else st.decode()

    async def finish(self, tid: str, rec: dict[str, Any]) -> bool:
        keys = [self._key('task', tid), self._key('lease', tid), f'{self.prefix}jobs']
        return bool(await self._call('finish', keys, [json.dumps(rec), rec['status']]))

    async def _epoch_call(self, keys: list, args: list) -> tuple[str, str]:
        verdict, v = (x.decode() for x in await self._call('epoch', [f'{self.prefix}epoch', *keys], [secrets.token_hex(16), *args]))
        if verdict == 'evicts':
            _log.error("Redis's maxmemory-policy is %s: set it to noeviction, or no confirmation is taken", v)
            raise StoreError("the server's shared store (Redis) may forget used answers (it evicts keys): nothing was run "
                             "(its operator: set Redis's maxmemory-policy to noeviction)")
        return verdict, v

    async def epoch(self) -> str:
        "The store's epoch, which a restart or a flush of Redis changes (asked each time: a question is rare, and a person answers it)"
        return (await self._epoch_call([], []))[1]

    async def spend(self, nonce: str, expiry: float, epoch: str | None) -> str:
        """Take a state's nonce until `expiry` (Unix seconds, by Redis's clock) if the state's `epoch` is the store's and it is
        unexpired by that clock: 'ok', 'used', 'stale' or 'expired'"""
        return (await self._epoch_call([self._key('nonce', nonce)], [str(epoch), int(expiry * 1000)]))[0]

# `help()` shows each public parameter's `# comment` (see core/_helpdoc.py)
add_param_docs(globals()[n] for n in __all__)
