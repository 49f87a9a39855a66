"""Seals for records that leave the process and come back: a confirmation's `requestState` (`funccall.mcp._state`) and a
pending call's record (`Toolbox.resume`). A seal is an HMAC-SHA256 over what the record says, keyed from a secret, so a
record edited anywhere on its way (a browser, a queue, a client) is refused; a nonce in it, remembered once used until
the record expires, makes it good once.

The secret is the developer's (at least 32 characters, the same in every process that must take another's records), or
32 random bytes made once per owner, so only that owner takes its records.
"""
from __future__ import annotations

import heapq, json, math, re, threading, time  # (hashlib, hmac, secrets, base64: on first use, so `import funccall` stays light)

from typing import Any

from ._json import jsonable

__all__ = ['SealError', 'NonceStore', 'Approvals', 'b64', 'unb64', 'digest', 'key', 'mac']

class SealError(ValueError):
    "A sealed record that fails verification: forged, altered, foreign, expired, replayed, or for another call"

_OLDER = "older than the oldest used record this process still remembers (a flood of newer ones pushed it out)"

class NonceStore:
    """The nonces of accepted records, each kept until its record's expiry: `add(nonce, expiry)` is False for one seen
    before. At most `max_used` are held: beyond that those expiring first are forgotten, and every record expiring no
    later than them (`floor`) is refused from then on, since its nonce may be among those forgotten. A flood of fresh
    records so costs only records older than the flood's (asked again), never those made after it"""
    max_used: int  # the most nonces remembered at once
    floor: float   # the latest expiry of a nonce forgotten before it expired: records expiring no later are refused

    def __init__(self, max_used: int = 100_000):  # the most nonces remembered at once
        if max_used < 1: raise ValueError("NonceStore: max_used must be at least 1")
        self.max_used, self.floor = max_used, 0.0  # floor: the latest expiry of a nonce forgotten before it expired
        self._used: set[str]
        self._heap: list[tuple[float, str]]
        self._used, self._heap, self._lock = set(), [], threading.Lock()  # the nonces, and (expiry, nonce) in expiry order
        self._now = 0.0  # the latest time seen: a wall clock set back must not bring an expired, forgotten nonce back to life

    def _forget(self, upto: float) -> None:
        "Forget the nonces of records expiring no later than `upto`"
        while self._heap and self._heap[0][0] <= upto: self._used.discard(heapq.heappop(self._heap)[1])

    def add(self, nonce: str, expiry: float) -> bool:
        """Remember `nonce` until `expiry`: False if it was seen before; `SealError` (its reason, to follow 'is') for a record
        expired, or one as old as a nonce forgotten (its own may be)"""
        with self._lock:
            now = self._now = max(self._now, time.time())
            self._forget(math.nextafter(now, -math.inf))  # the expired ones: their records are refused anyway
            if expiry < now: raise SealError("expired")
            full = len(self._used) >= self.max_used and nonce not in self._used
            if full and expiry <= self._heap[0][0]: raise SealError(_OLDER)  # older than all held: it is the one not kept
            if full: self.floor = max(self.floor, self._heap[0][0])
            self._forget(self.floor)
            if expiry <= self.floor: raise SealError(_OLDER)
            if nonce in self._used: return False
            self._used.add(nonce)
            heapq.heappush(self._heap, (expiry, nonce))
            return True

    @property
    def held(self) -> int:  # how many nonces are remembered now (expired ones go on the next `add`)
        "How many nonces are remembered now"
        return len(self._used)

def b64(b: bytes) -> str:
    import base64
    return base64.urlsafe_b64encode(b).rstrip(b'=').decode()
def unb64(s: str) -> bytes:
    import base64
    return base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))

def digest(v) -> str:
    """SHA-256 of `v` as canonical JSON (keys sorted): the same value gives the same digest in every process. A lone
    surrogate (JSON's `"\\ud800"`, which a model or client may send) is encoded as it is, not refused: a value that
    can't be digested would fail the call with an internal error"""
    import hashlib
    text = json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()

def key(
    secret: str | bytes | None,  # the developer's secret (at least 32 characters), or None for 32 random bytes
    purpose: bytes,              # what the key seals: one key per use, so a seal of one kind is never taken as another
    name: str = 'The secret',    # how an error names the secret
) -> bytes:                      # the HMAC key
    "An HMAC key for `purpose`, derived from `secret`"
    import hashlib, hmac, secrets
    if secret is None: raw = secrets.token_bytes(32)
    else:
        raw = secret.encode() if isinstance(secret, str) else bytes(secret)
        if len(raw) < 32: raise ValueError(f"{name} must be at least 32 characters long")
    return hmac.new(raw, purpose, hashlib.sha256).digest()

def mac(k: bytes, text: str) -> str:
    "The seal of `text` under key `k`: base64url of HMAC-SHA256, 43 characters"
    import hashlib, hmac
    return b64(hmac.new(k, text.encode(), hashlib.sha256).digest())

def _by_value(v) -> bool:
    "Whether `v` is plain JSON data, the same in every process (else only its type can count)"
    try: json.dumps(v, sort_keys=True)
    except (TypeError, ValueError, RecursionError): return False
    return True

def _injected_digest(inj: dict) -> str:
    "The injected values as a seal sees them: JSON data by value, anything else (a connection, a client) by its type"
    return digest({k: v if _by_value(v) else f'<{type(v).__module__}.{type(v).__qualname__}>' for k, v in inj.items()})

_SEAL = re.compile(r'\d{1,15}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}')  # expiry, nonce, HMAC: all a pending record's seal can be

class Approvals:
    """Seals for pending calls' records (`Toolbox.resume`): an HMAC over the tool's name, the arguments, the call id, the
    injected values (JSON data by value, other objects by type) and an expiry, so a record edited on its way, made by
    another toolbox (another secret), or expired is refused. An approval spends the record's nonce: one record runs at
    most once in this process (another process sharing the secret keeps its own record). A decline spends nothing: it
    runs nothing, and the record stays answerable until it expires or is approved"""
    ttl: float         # seconds a pending record stays answerable
    used: NonceStore   # the nonces of the records approved

    def __init__(self,
        secret: str | bytes | None = None,  # the secret (at least 32 characters) every process resuming another's records shares
        ttl: float = 86_400,                # seconds a pending record stays answerable
        max_used: int = 100_000,            # the most approved records remembered at once (beyond it, the oldest are refused)
    ):
        self.ttl, self.used = ttl, NonceStore(max_used)
        self._key = key(secret, b'funccall pending call v1', 'Toolbox(secret=...)')

    def _mac(self, name: str, args: Any, call_id: Any, inj: dict[str, Any], expiry: int, nonce: str) -> str:
        return mac(self._key, json.dumps([name, digest(jsonable(args)), call_id, _injected_digest(inj), expiry, nonce]))

    def seal(self, name: str, args: Any, call_id: Any, inj: dict[str, Any]) -> str:
        "The seal of a pending call of tool `name` with `args` (after the pre-hook), answering `call_id`, run with injected `inj`"
        import secrets
        e, n = int(time.time() + self.ttl) + 1, secrets.token_urlsafe(12)
        return f'{e}.{n}.{self._mac(name, args, call_id, inj, e, n)}'

    def check(self, seal: Any, name: str, args: Any, call_id: Any, inj: dict[str, Any], spend: bool) -> None:
        "`SealError` unless `seal` is this owner's, over exactly this call, unexpired, and (`spend`: approving) never approved before"
        import hmac
        if not isinstance(seal, str) or not _SEAL.fullmatch(seal):
            raise SealError("This pending record carries no seal: only a record its own toolbox made (to_dict/from_dict keep it) is resumed")
        e, n, m = seal.split('.')
        if not hmac.compare_digest(m, self._mac(name, args, call_id, inj, int(e), n)):
            raise SealError(f"The pending record of {name!r:.80} failed verification: its tool, arguments, call id or injected values "
                            "changed since it was made, or another toolbox (another secret) made it")
        if int(e) < time.time(): raise SealError(f"The pending record of {name!r:.80} has expired: let the model call the tool again")
        if not spend: return
        try: fresh = self.used.add(n, int(e))
        except SealError as why: raise SealError(f"The pending record of {name!r:.80} is {why}: let the model call the tool again") from None
        if not fresh: raise SealError(f"The pending record of {name!r:.80} was approved before: it runs once")
