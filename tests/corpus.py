"""The corpus of real MCP tool schemas in `tests/data/mcp_corpus/`, for tests to run over.

Each file there is one server's `tools/list` as the server sent it, with its package, registry and version
(`tests/collect_mcp_corpus.py` wrote them; `tests/data/mcp_corpus/README.md` says what each server is).
Every call parses the files afresh, so a test may change what it gets without touching another test's copy.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

__all__ = ['CORPUS_DIR', 'corpus_servers', 'load_corpus']

CORPUS_DIR = Path(__file__).parent/'data'/'mcp_corpus'

@cache
def _texts() -> tuple[str, ...]: return tuple(p.read_text() for p in sorted(CORPUS_DIR.glob('*.json')))

def corpus_servers() -> dict[str, dict]:
    "Server name -> its record: `server`, `package`, `registry`, `version`, `command`, `collected`, `tools`, ..."
    return {(d := json.loads(t))['server']: d for t in _texts()}

def load_corpus() -> list[tuple[str, dict]]:
    "`(server name, tool dict)` for every tool in the corpus, each tool as the server listed it"
    return [(name, t) for name, s in corpus_servers().items() for t in s['tools']]
