"""Sealed `requestState` for MCP's multi round-trip requests (protocol 2026-07-28): what a served tool asked the user
(a confirmation, a form) travels to the client and back, and must come back exactly as this server minted it.

A state is `base64url(payload) + '.' + base64url(HMAC-SHA256(key, payload))`, the payload a JSON object naming the tool,
a SHA-256 of its canonical arguments (JSON, keys sorted), an expiry (wall-clock seconds, so several processes agree), a
random nonce, and the answers given so far. `open` checks, before anything of the call runs: the MAC (constant-time),
the tool, the arguments, the expiry, and that the nonce was never used; a state passes once.

The key is derived from a secret: `FUNCCALL_MCP_SECRET` in the environment (at least 32 characters; give every worker
behind one address the same one; the command line takes it out of the environment (its starting bytes overwritten) before any tool loads, and hands
it to `--workers` processes through their pickled config), else 32 random bytes made when the process starts, so a
state minted by another process (an earlier run, another worker) is refused. Anything that isn't a state this
server minted, down to text that isn't ASCII or base64, is a `StateError`. A state minted for an authenticated caller (OAuth on HTTP)
is good only for that caller. The payload is signed, not encrypted: the client can read it, and it holds only what
the client itself sent (its arguments' digest, its own answers).

Single use is kept in memory: each process remembers the nonces it accepted until they expire, at most `max_used` of
them (beyond that it refuses new answers rather than forget one). Several workers share no memory, so a state accepted
by one worker could be replayed once on each other worker within its expiry: where that matters, give the workers one
Redis (`mk_server(store=RedisStore(url))`, `--redis URL`: see `funccall.mcp._store`), or pass `mk_server(state_store=...)`
anything shared with `NonceStore`'s `add`.
"""
from __future__ import annotations

import base64, binascii, hashlib, hmac, json, os, re, secrets, threading, time
from collections import OrderedDict

__all__ = ['SECRET_ENV', 'StateError', 'NonceStore', 'Sealer']

SECRET_ENV = 'FUNCCALL_MCP_SECRET'  # the environment variable with the server secret that several workers share
_MAX_TOKEN = 256 * 1024             # characters: a state longer than any this server mints (a dozen answers of 16 KB) is refused unread
_TOKEN = re.compile(r'[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}')  # base64url payload, '.', base64url HMAC-SHA256: all a state can be

class StateError(ValueError):
    "A `requestState` that fails verification: forged, altered, foreign, expired, replayed, or for another call"

class NonceStore:
    "The nonces of accepted states, each kept until its expiry: `add(nonce, expiry)` is False for one seen before"
    def __init__(self, max_used: int = 100_000):  # the most nonces remembered at once
        self.max_used, self._used, self._lock = max_used, OrderedDict(), threading.Lock()

    def add(self, nonce: str, expiry: float) -> bool:
        now = time.time()
        with self._lock:
            while self._used and next(iter(self._used.values())) < now: self._used.popitem(last=False)  # expiries come in order
            if nonce in self._used: return False
            if len(self._used) >= self.max_used: raise StateError("too many answers in flight on this server: ask again later")
            self._used[nonce] = expiry
            return True

def _b64(b: bytes) -> str: return base64.urlsafe_b64encode(b).rstrip(b'=').decode()
def _unb64(s: str) -> bytes: return base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))

_FIELDS = {'t': str, 'a': str, 'e': float, 'n': str, 'd': dict}

def _payload(body: str) -> dict:
    "The payload of a state whose MAC passed: signed by this server, so well-formed unless the key leaked; checked all the same"
    try: p = json.loads(_unb64(body))
    except (ValueError, binascii.Error) as e: raise StateError("requestState is not one this server made") from e
    if not isinstance(p, dict) or any(not isinstance(p.get(k), t) for k, t in _FIELDS.items()):
        raise StateError("requestState is not one this server made")
    return p

def _digest(args) -> str:
    "SHA-256 of the arguments as canonical JSON: the same call gives the same digest in every process"
    return hashlib.sha256(json.dumps(args, sort_keys=True, separators=(',', ':'), ensure_ascii=False, default=repr).encode()).hexdigest()

def _secret(secret) -> bytes:
    if secret is None: secret = os.environ.get(SECRET_ENV) or None
    if secret is None: return secrets.token_bytes(32)
    secret = secret.encode() if isinstance(secret, str) else bytes(secret)
    if len(secret) < 32: raise ValueError(f"The MCP server secret ({SECRET_ENV}) must be at least 32 characters long")
    return secret

class Sealer:
    "Mints and checks sealed request states"
    def __init__(self,
        secret: str | bytes | None = None,  # the server secret (default: `$FUNCCALL_MCP_SECRET`, else random per process)
        ttl: float = 300,                   # seconds a state stays valid: long enough for a person to answer, no longer
        store: NonceStore | None = None,    # where accepted nonces are kept (default: this process's memory)
    ):
        self.ttl, self.store = ttl, store or NonceStore()
        self._key = hmac.new(_secret(secret), b'funccall mcp requestState v1', hashlib.sha256).digest()  # one key per use

    def _mac(self, body: str) -> str: return _b64(hmac.new(self._key, body.encode(), hashlib.sha256).digest())

    def seal(self, tool: str, args: dict, data: dict, principal: str | None = None) -> str:
        "A state for one call of `tool` with `args` by `principal` (the authenticated caller, if any), carrying `data` (JSON)"
        payload = {'t': tool, 'a': _digest(args), 'e': time.time() + self.ttl, 'n': secrets.token_urlsafe(16), 'p': principal, 'd': data}
        body = _b64(json.dumps(payload, separators=(',', ':')).encode())
        return f'{body}.{self._mac(body)}'

    def open(self, token, tool: str, args: dict, principal: str | None = None) -> dict:
        "The data of `token` if this server minted it for exactly this call by this caller, unexpired and never used; else `StateError`"
        p = self.verify(token, tool, args, principal)
        if not self.store.add(p['n'], p['e']): raise StateError("requestState was already used: each answer counts once")
        return p['d']

    def verify(self, token, tool: str, args: dict, principal: str | None = None) -> dict:
        "The payload of `token` (nonce `n`, expiry `e`, data `d`) if minted here for exactly this call by this caller, unexpired; else `StateError`"
        if not isinstance(token, str) or len(token) > _MAX_TOKEN or not _TOKEN.fullmatch(token):
            raise StateError("requestState is not one this server made")
        body, mac = token.split('.')
        if not hmac.compare_digest(mac, self._mac(body)):  # (both ASCII, as the pattern made sure)
            raise StateError("requestState failed verification: altered, forged, or made by another server (or an earlier run)")
        p = _payload(body)
        if p['t'] != tool: raise StateError(f"requestState was made for tool {p['t']!r}, not {tool!r}")
        if p['a'] != _digest(args): raise StateError("requestState was made for other arguments: the call changed since it was asked")
        if p['p'] != principal: raise StateError("requestState was made for another caller")
        if p['e'] < time.time(): raise StateError("requestState has expired: call the tool again")
        return p
