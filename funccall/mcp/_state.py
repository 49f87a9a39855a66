"""Sealed `requestState` for MCP's multi round-trip requests (protocol 2026-07-28): what a served tool asked the user
(a confirmation, a form) travels to the client and back, and must come back exactly as this server minted it.

A state is `base64url(payload) + '.' + base64url(HMAC-SHA256(key, payload))`, the payload a JSON object naming the tool,
a SHA-256 of its canonical arguments (JSON, keys sorted), an expiry (wall-clock seconds, so several processes agree), a
random nonce, and the answers given so far. `check` checks, before anything of the call runs: the MAC (constant-time),
the tool, the arguments and the expiry; `spend` that the nonce was never used, so a state that is spent passes once.

The key is derived from a secret: `FUNCCALL_MCP_SECRET` in the environment (at least 32 characters; give every worker
behind one address the same one; the command line takes it out of the environment (its starting bytes overwritten) before any tool loads, and hands
it to `--workers` processes through their pickled config), else 32 random bytes made when the process starts, so a
state minted by another process (an earlier run, another worker) is refused. Anything that isn't a state this
server minted, down to text that isn't ASCII or base64, is a `StateError`. A state minted for an authenticated caller (OAuth on HTTP)
is good only for that caller. The payload is signed, not encrypted: the client can read it, and it holds only what
the client itself sent (its arguments' digest, its own answers).

Single use is kept in memory: each process remembers the nonces it accepted until they expire, at most `max_used` of
them (beyond that it forgets those expiring first and refuses every state expiring no later: see `NonceStore`). Only
what must be single-use is remembered: the server spends a state (`spend`) when its answers let something run that a
fresh call would not, never for a declined or cancelled confirmation (run again, it declines again). And one client
(the authenticated caller, else the address it connects from, an IPv6 one by its /64) holds at most `per_client` of
them at once, so one client's flood of answers can't fill what another's confirmation needs (behind a proxy every
client shares one address: authenticate them, or name the proxy, `--trust-proxy`, so each client's own address counts).
Several workers share no memory, so a state accepted by one worker could be replayed once on each other worker within
its expiry: where that matters, give the workers one Redis (`mk_server(store=RedisStore(url))`, `--redis URL`: see
`funccall.mcp._store`), or pass `mk_server(state_store=...)` anything shared with `NonceStore`'s `add`.
"""
from __future__ import annotations

import heapq, hmac, json, os, re, secrets, threading, time

from ..core._seal import NonceStore, SealError, b64, digest, key, mac, unb64
from ..core._helpdoc import add_param_docs

__all__ = ['SECRET_ENV', 'StateError', 'NonceStore', 'Sealer']

SECRET_ENV = 'FUNCCALL_MCP_SECRET'  # the environment variable with the server secret that several workers share
_MAX_TOKEN = 256 * 1024             # characters: a state longer than any this server mints (a dozen answers of 16 KB) is refused unread
_TOKEN = re.compile(r'[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}')  # base64url payload, '.', base64url HMAC-SHA256: all a state can be

class StateError(SealError):
    "A `requestState` that fails verification: forged, altered, foreign, expired, replayed, or for another call"

_FIELDS = {'t': str, 'a': str, 'e': float, 'n': str, 'd': dict}

def _payload(body: str) -> dict:
    "The payload of a state whose MAC passed: signed by this server, so well-formed unless the key leaked; checked all the same"
    try: p = json.loads(unb64(body))
    except ValueError as e: raise StateError("requestState is not one this server made") from e  # (binascii.Error is one)
    if not isinstance(p, dict) or any(not isinstance(p.get(k), t) for k, t in _FIELDS.items()):
        raise StateError("requestState is not one this server made")
    return p

def _secret(secret):
    "The secret given, else the environment's, else None (random)"
    return (os.environ.get(SECRET_ENV) or None) if secret is None else secret

class _Shares:
    "The answers each client spent that are not yet expired: one client may hold at most `per_client` at once"
    _held: dict[str, list[float]]  # client -> heap of expiries
    def __init__(self, per_client: int | None):
        self.per_client, self._held, self._lock, self._swept = per_client, {}, threading.Lock(), time.time()  # client -> heap of expiries

    def _drop(self, client, now: float) -> list:
        h = self._held.get(client, [])
        while h and h[0] < now: heapq.heappop(h)
        if not h: self._held.pop(client, None)
        return h

    def take(self, client, expiry: float) -> None:
        "Count one more answer of `client` until `expiry`, or `StateError` when it holds its share already"
        if client is None or self.per_client is None: return
        now = time.time()
        with self._lock:
            if now - self._swept > 60:  # clients gone quiet leave nothing behind
                for c in list(self._held): self._drop(c, now)
                self._swept = now
            if len(h := self._drop(client, now)) >= self.per_client:
                raise StateError(f"this client has {self.per_client} answers in flight already: ask again once they expire")
            heapq.heappush(h, expiry)
            self._held[client] = h

    def give_back(self, client, expiry: float) -> None:
        if client is None or self.per_client is None: return
        with self._lock:
            if (h := self._held.get(client)) and expiry in h: h.remove(expiry); heapq.heapify(h)

class Sealer:
    "Mints and checks sealed request states"
    def __init__(self,
        secret: str | bytes | None = None,  # the server secret (default: `$FUNCCALL_MCP_SECRET`, else random per process)
        ttl: float = 300,                   # seconds a state stays valid: long enough for a person to answer, no longer
        per_client: int | None = 1_000,     # the most unexpired answers one client may have spent (None: no bound)
    ):
        self.ttl, self.shares = ttl, _Shares(per_client)
        self._key = key(_secret(secret), b'funccall mcp requestState v1', f"The MCP server secret ({SECRET_ENV})")

    def seal(self, tool: str, args: dict, data: dict, principal: str | None = None) -> str:
        "A state for one call of `tool` with `args` by `principal` (the authenticated caller, if any), carrying `data` (JSON)"
        payload = {'t': tool, 'a': digest(args), 'e': time.time() + self.ttl, 'n': secrets.token_urlsafe(16), 'p': principal, 'd': data}
        body = b64(json.dumps(payload, separators=(',', ':')).encode())
        return f'{body}.{mac(self._key, body)}'

    def check(self, token, tool: str, args: dict, principal: str | None = None) -> dict:
        "The payload of `token` if this server minted it for exactly this call by this caller and it is unexpired; else `StateError`"
        if not isinstance(token, str) or len(token) > _MAX_TOKEN or not _TOKEN.fullmatch(token):
            raise StateError("requestState is not one this server made")
        body, m = token.split('.')
        if not hmac.compare_digest(m, mac(self._key, body)):  # (both ASCII, as the pattern made sure)
            raise StateError("requestState failed verification: altered, forged, or made by another server (or an earlier run)")
        p = _payload(body)
        if p['t'] != tool: raise StateError(f"requestState was made for tool {p['t']!r}, not {tool!r}")
        if p['a'] != digest(args): raise StateError("requestState was made for other arguments: the call changed since it was asked")
        if p['p'] != principal: raise StateError("requestState was made for another caller")
        if p['e'] < time.time(): raise StateError("requestState has expired: call the tool again")
        return p

    async def spend(self,
        p: dict,      # a payload `check` passed
        nonces,       # the server's used states: `await spend(nonce, expiry, epoch)` -> 'ok', 'used', 'stale' or 'expired' (`_store`)
        client=None,  # who answered: one client holds at most `per_client` spent answers at once
    ) -> None:
        "Use up `p` in `nonces`, in the epoch it was sealed in: `StateError` if used before, sealed in an earlier epoch, or past the client's share"
        self.shares.take(client, p['e'])
        try: spent = await nonces.spend(p['n'], p['e'], p['d'].get('epoch'))
        except SealError as e: spent = e  # expired, or older than this process's memory of used answers still reaches
        except BaseException: self.shares.give_back(client, p['e']); raise  # (the store failed: the server says so)
        if spent == 'ok': return
        self.shares.give_back(client, p['e'])
        if isinstance(spent, SealError): raise StateError(f"requestState is {spent}: call the tool again") from None
        if spent == 'expired': raise StateError("requestState has expired: call the tool again")  # by the store's clock
        if spent == 'stale':
            raise StateError("requestState was made before the server's shared store restarted (or lost its data): call the tool again")
        raise StateError("requestState was already used: each answer counts once")

# `help()` shows each public parameter's `# comment` (see core/_helpdoc.py)
add_param_docs(globals()[n] for n in __all__)
