"""Seals for records that leave the process and come back: a confirmation's `requestState` (`funccall.mcp._state`) and a
pending call's record (`Toolbox.resume`). A seal is an HMAC-SHA256 over what the record says, keyed from a secret, so a
record edited anywhere on its way (a browser, a queue, a client) is refused; a nonce in it, remembered once used until
the record expires, makes it good once.

The secret is the developer's (at least 32 characters, the same in every process that must take another's records), or
32 random bytes made once per owner, so only that owner takes its records.
"""
from __future__ import annotations

import base64, hashlib, hmac, json, secrets, threading, time
from collections import OrderedDict

__all__ = ['SealError', 'NonceStore', 'b64', 'unb64', 'digest', 'key', 'mac']

class SealError(ValueError):
    "A sealed record that fails verification: forged, altered, foreign, expired, replayed, or for another call"

class NonceStore:
    "The nonces of accepted records, each kept until its expiry: `add(nonce, expiry)` is False for one seen before"
    def __init__(self, max_used: int = 100_000):  # the most nonces remembered at once
        self.max_used, self._used, self._lock = max_used, OrderedDict(), threading.Lock()

    def add(self, nonce: str, expiry: float) -> bool:
        now = time.time()
        with self._lock:
            while self._used and next(iter(self._used.values())) < now: self._used.popitem(last=False)  # expiries come in order
            if nonce in self._used: return False
            # (refused rather than forgetting one unexpired: a forgotten nonce could be replayed)
            if len(self._used) >= self.max_used: raise SealError("too many answers in flight here: ask again later")
            self._used[nonce] = expiry
            return True

    @property
    def held(self) -> int:  # how many nonces are remembered now (expired ones go on the next `add`)
        "How many nonces are remembered now"
        return len(self._used)

def b64(b: bytes) -> str: return base64.urlsafe_b64encode(b).rstrip(b'=').decode()
def unb64(s: str) -> bytes: return base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))

def digest(v) -> str:
    "SHA-256 of `v` as canonical JSON (keys sorted): the same value gives the same digest in every process"
    return hashlib.sha256(json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False, default=repr).encode()).hexdigest()

def key(
    secret: str | bytes | None,  # the developer's secret (at least 32 characters), or None for 32 random bytes
    purpose: bytes,              # what the key seals: one key per use, so a seal of one kind is never taken as another
    name: str = 'The secret',    # how an error names the secret
) -> bytes:                      # the HMAC key
    "An HMAC key for `purpose`, derived from `secret`"
    if secret is None: raw = secrets.token_bytes(32)
    else:
        raw = secret.encode() if isinstance(secret, str) else bytes(secret)
        if len(raw) < 32: raise ValueError(f"{name} must be at least 32 characters long")
    return hmac.new(raw, purpose, hashlib.sha256).digest()

def mac(k: bytes, text: str) -> str:
    "The seal of `text` under key `k`: base64url of HMAC-SHA256, 43 characters"
    return b64(hmac.new(k, text.encode(), hashlib.sha256).digest())
