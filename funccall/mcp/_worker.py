"""What one process of `funccall mcp serve --http HOST:PORT --workers N` serves, and the secret the workers share
(so any worker takes any answer): handed to it by its parent inside uvicorn's config, pickled through the pipe that
starts the worker, never through the environment, which every subprocess a tool starts would inherit.

Light to import: a worker unpickles this before it answers uvicorn's health checks (which kill a worker silent for
5 s), so the MCP SDK is imported only when the app is built."""
from __future__ import annotations

import contextlib, sys

__all__ = ['WorkerApp']

class WorkerApp:
    "uvicorn's app factory for one worker: the tools' targets, the server's options and the shared secret"
    def __init__(self, cfg: dict): self.cfg = cfg  # targets, name, host, allow_hosts, allow_origins, secret, errors, tasks, redis

    def __repr__(self) -> str: return f"WorkerApp({self.cfg.get('targets')!r})"  # never the secret, in a log line

    def __call__(self):
        from .._load import load_target
        from .server import mk_asgi_app
        c = self.cfg
        with contextlib.redirect_stdout(sys.stderr): fs = [f for t in c['targets'] for f in load_target(t)]  # what modules print as they load
        store = None
        if c.get('redis'):
            from ._store import RedisStore
            store = RedisStore(c['redis'])
        return mk_asgi_app(fs, c['host'], c['allow_hosts'], c['allow_origins'], stateless=True, name=c['name'],
                           secret=c['secret'], errors=c['errors'], tasks=c.get('tasks', ()), store=store)
