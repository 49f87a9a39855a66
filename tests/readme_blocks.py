"""The README's ```python blocks, run as a user pastes them: in order, in one session, each `expr  # value` checked.

    python tests/readme_blocks.py README.md   # a fresh interpreter: prints what it ran as JSON, exits 1 at the first failure

Only the standard library is imported here, so the session starts with nothing the README doesn't import itself. A
block that can't run as pasted (a live API, say) is marked on the line before it, `<!-- not run: why -->`, and counted.
Each block's source is put in `linecache`, as IPython does for a cell, so `get_schema` reads its `# comments`."""
import ast, json, linecache, re, sys, traceback
from pathlib import Path

NOT_RUN = re.compile(r'<!-- not run: (.+?) -->\n$')

def blocks(text: str) -> list[dict]:
    "Each ```python block of a README: its source, the line it starts on, and why it is not run (None: it is run)"
    out = []
    for m in re.finditer(r'```python\n(.*?)```', text, re.S):
        before = text[:m.start()]
        skip = NOT_RUN.search(before[before.rfind('\n', 0, len(before) - 1) + 1:])
        out.append({'src': m[1], 'line': before.count('\n') + 2, 'not_run': skip[1] if skip else None})
    return out

def shown(comment: str):
    "The value a `# ...` comment shows: a literal, or text up to a ':' that starts an explanation"
    for text in (comment, comment.split(': ', 1)[0].split(' (', 1)[0]):
        try: return ast.literal_eval(text)
        except (ValueError, SyntaxError): pass
    return comment

def run_shown(
    src: str,             # a README block
    ns: dict,             # the session's namespace: what the blocks before defined
    name: str='<README>', # the block's file name, in tracebacks and `linecache`
) -> int:                 # how many `# value`s were checked
    "Run README block `src` in `ns`, checking each `expr  # value` (a value on the comment lines below it too)"
    lines, checked = src.splitlines(), 0
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)  # so `# comments` can be read, as from a file
    for node in ast.parse(src).body:
        if not isinstance(node, ast.Expr):
            exec(compile(ast.Module([node], []), name, 'exec'), ns); continue
        after = lines[node.end_lineno - 1].split('#', 1)
        if len(after) == 2: value = shown(after[1].strip())
        else:  # a value shown on the comment lines below the call
            block = []
            for ln in lines[node.end_lineno:]:
                if not ln.startswith('#'): break
                block.append(ln[1:].strip())
            value = ast.literal_eval(' '.join(block)) if block else None
        try: v = eval(compile(ast.Expression(node.value), name, 'eval'), ns)
        except Exception as e:
            assert isinstance(value, str) and value.startswith(type(e).__name__), (ast.unparse(node), e)
            assert value.split('... ')[-1] in str(e), (ast.unparse(node), str(e), value)
        else:
            if value is None: continue
            assert v == value or str(v) == value or repr(v) == value, (ast.unparse(node), v, value)
        checked += 1
    return checked

def run_all(
    readme: str,   # the README's path
    ns: dict,      # the session's namespace
) -> dict:         # what ran: {'run': [(line, values checked)], 'not_run': [(line, why)], 'failed': (line, traceback) or None}
    "Every block of the README in order in `ns`, stopping at the first that raises or shows a wrong value"
    report = {'run': [], 'not_run': [], 'failed': None}
    for b in blocks(Path(readme).read_text()):
        if b['not_run']: report['not_run'].append((b['line'], b['not_run'])); continue
        try: report['run'].append((b['line'], run_shown(b['src'], ns, f"<README.md line {b['line']}>")))
        except BaseException:  # noqa: BLE001 - reported, with where
            report['failed'] = (b['line'], traceback.format_exc())
            break
    return report

if __name__ == '__main__':
    import types
    session = sys.modules['__main__'] = types.ModuleType('__main__')  # a fresh `__main__`, as the REPL gives: none of this module's names
    report = run_all(sys.argv[1], vars(session))
    print(json.dumps(report))
    sys.exit(1 if report['failed'] else 0)
