"The README's tour runs as shown: each `expr  # value` in its first Python block gives that value"
import ast, linecache, re
from pathlib import Path

README = Path(__file__).parent.parent / 'README.md'

def _tour() -> str: return re.findall(r'```python\n(.*?)```', README.read_text(), re.S)[0]

def _shown(comment: str):
    "The value a `# ...` comment shows: a literal, or text up to a ':' that starts an explanation"
    for text in (comment, comment.split(': ', 1)[0].split(' (', 1)[0]):
        try: return ast.literal_eval(text)
        except (ValueError, SyntaxError): pass
    return comment

def test_readme_tour_runs_and_shows_true_values():
    src = _tour()
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
            assert v == shown or str(v) == shown, (ast.unparse(node), v, shown)
        checked += 1
    assert checked >= 6
