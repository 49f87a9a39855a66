"""What happened in each tool call, for people: OpenTelemetry spans and the `funccall` logger.

Every call the pipeline runs (a refused one too) is an `execute_tool {name}` span with the GenAI semantic
conventions' attributes (`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`,
`error.type` on failure), and events for the repairs funccall made to the model's arguments, the problems it found,
retries and pending approvals. Arguments and results go in only on opt-in (`Toolbox(trace_content=True)` or
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). The logger `funccall` says the same at DEBUG.

funccall never imports OpenTelemetry: a program that set a tracer provider has imported `opentelemetry.trace`, so
while it is absent from `sys.modules` (or no provider is set) no span is made, and a call costs one dict look-up.
"""
from __future__ import annotations

import json, logging, os, sys
from contextlib import contextmanager

__all__ = ['logger', 'listening', 'start', 'enter', 'event', 'end', 'meta', 'joined']

logger = logging.getLogger('funccall')
_CONTENT_ENV = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'
_tracer = [None, None]  # (the provider it came from, the tracer): a new provider set later gets a new tracer

def _otel_tracer():
    "funccall's tracer when the program set an OpenTelemetry tracer provider, else None"
    ot = sys.modules.get('opentelemetry.trace')
    if ot is None: return None
    p = ot.get_tracer_provider()
    if isinstance(p, (ot.ProxyTracerProvider, ot.NoOpTracerProvider)): return None  # the API's defaults: nothing listens
    if _tracer[0] is not p: _tracer[:] = p, p.get_tracer('funccall')
    return _tracer[1]

class _Call:
    "One call being traced: its span (if OpenTelemetry listens) and what the log line says"
    __slots__ = ('span', 'name', 'call_id', 'content', 'ot')
    def __init__(self, span, name, call_id, content, ot): self.span, self.name, self.call_id, self.content, self.ot = span, name, call_id, content, ot

def listening() -> bool:
    "Whether anyone listens: an OpenTelemetry tracer provider, or the `funccall` logger at DEBUG"
    return _otel_tracer() is not None or logger.isEnabledFor(logging.DEBUG)

def start(
    name: str,             # the tool's name
    call_id: str | None,   # the provider's id of the call
    description: str='',   # the tool's description
    content: bool=False,   # record arguments and results
) -> _Call | None:         # what `event` and `end` take; None when nobody listens (the common, free case)
    "Begin tracing a call, when anyone listens: its span (`enter` makes it current where the call runs)"
    tr = _otel_tracer()
    if tr is None and not logger.isEnabledFor(logging.DEBUG): return None
    content = content or os.environ.get(_CONTENT_ENV, '').lower() == 'true'
    span = None
    if tr is not None:
        ot = sys.modules['opentelemetry.trace']
        attrs = {'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.type': 'function'}
        if call_id: attrs['gen_ai.tool.call.id'] = call_id
        if description: attrs['gen_ai.tool.description'] = description
        span = tr.start_span(f'execute_tool {name}', kind=ot.SpanKind.INTERNAL, attributes=attrs)
    return _Call(span, name, call_id, content, None)

def enter(c: _Call | None) -> None:
    "Make the call's span current (in the task or thread that runs the call), so the tool's own spans nest in it"
    if c is None or c.span is None: return
    ctx = sys.modules['opentelemetry.context']
    c.ot = ctx, ctx.attach(sys.modules['opentelemetry.trace'].set_span_in_context(c.span))

def event(c: _Call | None, what: str, attrs: dict) -> None:
    "An event of the call: 'funccall.repair', 'funccall.problem', 'funccall.retry', 'funccall.pending'"
    if c is None: return
    if c.span is not None: c.span.add_event(what, attrs)
    logger.debug('%s %s (call %s): %s', what, c.name, c.call_id, attrs)

def _json(v) -> str:
    try: return json.dumps(v, ensure_ascii=False, default=str)[:10_000]
    except (TypeError, ValueError, RecursionError): return repr(v)[:10_000]

def end(
    c: _Call | None,   # from `start`
    r=None,            # the `ToolResult`; None when the call was cancelled
    exc: BaseException | None=None,  # what escaped the pipeline, if anything did
) -> None:
    "End the call's span with what came of it, and log it"
    if c is None: return
    status = r.status if r is not None else 'cancelled'
    err = (r.failure if r is not None and r.status == 'failure' else None) or (type(exc).__name__ if exc is not None else None)
    if c.span is not None:
        ot = sys.modules['opentelemetry.trace']
        if r is not None and r.exception is not None and r.failure == 'tool': err = type(r.exception).__qualname__
        if c.content and r is not None:
            c.span.set_attribute('gen_ai.tool.call.arguments', _json(r.arguments))
            if r.status == 'success': c.span.set_attribute('gen_ai.tool.call.result', r.text)
        if status == 'pending': c.span.set_attribute('funccall.status', 'pending')
        if err is not None:
            c.span.set_attribute('error.type', err)
            c.span.set_status(ot.Status(ot.StatusCode.ERROR, (r.error if r is not None else str(exc))[:1000]))
        if r is not None and r.stop: c.span.set_attribute('funccall.stop', True)
        if c.ot is not None: c.ot[0].detach(c.ot[1])
        c.span.end()
    if c.content and r is not None: logger.debug('execute_tool %s (call %s) %s: %s -> %s', c.name, c.call_id, status, _json(r.arguments), r.text)
    else: logger.debug('execute_tool %s (call %s) %s%s', c.name, c.call_id, status, f': {err}' if err else '')

def _propagate():
    "OpenTelemetry's propagators when a tracer is set up (imported then only: the program uses OpenTelemetry already)"
    if _otel_tracer() is None: return None
    import importlib
    return importlib.import_module('opentelemetry.propagate')

def meta() -> dict | None:
    "The current trace context (W3C `traceparent`, `tracestate`) for an MCP request's `_meta`; None when nobody traces"
    prop = _propagate()
    if prop is None: return None
    m: dict = {}
    prop.inject(m)
    return m or None

@contextmanager
def joined(
    m,  # an MCP request's `_meta` (a dict or the SDK's model)
):
    "Run inside the trace an MCP request's `_meta` carries, so a server's `execute_tool` spans join the client's trace"
    prop = _propagate() if m else None
    if prop is None:
        yield
        return
    carrier = m if isinstance(m, dict) else getattr(m, 'model_extra', None) or {}  # the SDK gives a dict; a model keeps extras aside
    ctx = sys.modules['opentelemetry.context']
    token = ctx.attach(prop.extract(carrier))
    try: yield
    finally: ctx.detach(token)
