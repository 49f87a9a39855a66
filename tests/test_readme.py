"""The README says what is true: its tour and its structured-outputs snippet run as shown (each `expr  # value` gives
that value), its figures are what the commands it cites print, and its test command lints."""
import ast, linecache, re, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = ROOT / 'README.md'

def _blocks() -> list[str]: return re.findall(r'```python\n(.*?)```', README.read_text(), re.S)
def _tour() -> str: return _blocks()[0]

def _shown(comment: str):
    "The value a `# ...` comment shows: a literal, or text up to a ':' that starts an explanation"
    for text in (comment, comment.split(': ', 1)[0].split(' (', 1)[0]):
        try: return ast.literal_eval(text)
        except (ValueError, SyntaxError): pass
    return comment

def test_readme_tour_runs_and_shows_true_values():
    assert _run_shown(_tour()) >= 6

def test_readme_structured_outputs_snippet_runs_as_written():
    "The snippet, pasted into a fresh interpreter, runs: its imports are there, and each `# value` is what it gives"
    [src] = [b for b in _blocks() if 'output_format' in b and '@dataclass' in b]
    assert _run_shown(src) >= 4

def _run_shown(src: str) -> int:
    "Run README block `src`, checking each `expr  # value`; how many values were checked"
    lines, ns, checked = src.splitlines(), {}, 0
    linecache.cache['<README>'] = (len(src), None, src.splitlines(True), '<README>')  # so `# comments` can be read, as from a file
    for node in ast.parse(src).body:
        if not isinstance(node, ast.Expr):
            exec(compile(ast.Module([node], []), '<README>', 'exec'), ns); continue
        after = lines[node.end_lineno - 1].split('#', 1)
        if len(after) == 2: shown = _shown(after[1].strip())
        else:  # a value shown on the comment lines below the call
            block = []
            for ln in lines[node.end_lineno:]:
                if not ln.startswith('#'): break
                block.append(ln[1:].strip())
            shown = ast.literal_eval(' '.join(block)) if block else None
        try: v = eval(compile(ast.Expression(node.value), '<README>', 'eval'), ns)
        except Exception as e:
            assert isinstance(shown, str) and shown.startswith(type(e).__name__), (ast.unparse(node), e)
            assert shown.split('... ')[-1] in str(e)
        else:
            if shown is None: continue
            assert v == shown or str(v) == shown or repr(v) == shown, (ast.unparse(node), v, shown)
        checked += 1
    return checked

@pytest.mark.corpus  # a pytest run over the whole corpus: CI runs it
def test_readme_strict_figures_are_what_the_cited_command_prints():
    "The corpus figures in the Providers bullet, against the output of the command the README cites for them"
    text = ' '.join(README.read_text().split())
    m = re.search(r"Over the (\d+) tools of the real MCP servers in `tests/data/mcp_corpus/`, (\d+) \((\d+)%\) go strict on OpenAI "
                  r"and (\d+) \((\d+)%\) on Claude \(`(pytest -s [^`]+)`", text)
    assert m, 'the README no longer gives the strict figures in the form this test reads'
    cmd = m[6].split()
    assert cmd[:2] == ['pytest', '-s']
    r = subprocess.run([sys.executable, '-m', *cmd, '-q', '-p', 'no:cacheprovider'], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:]
    printed = re.search(r'strict over (\d+) corpus tools: OpenAI (\d+) \((\d+)%\), Claude (\d+) \((\d+)%\)', r.stdout)
    assert printed, r.stdout[-2000:]
    assert m.groups()[:5] == printed.groups()

def test_the_readme_test_command_lints():
    "The README says `python -m pytest` runs lint: this is that lint, `ruff check .` with the project's settings"
    pytest.importorskip('ruff')
    r = subprocess.run([sys.executable, '-m', 'ruff', 'check', '.'], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:]
