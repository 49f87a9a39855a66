"""Streamed responses as the four providers send them, for tests: a script of steps becomes each provider's events
(in their JSON form, field for field as the APIs document them), and events become the server-sent-event bytes the
SDK clients read through an `httpx` mock transport.

The clients answer every request with one body, or each with the next of a list of bodies (an agent loop's turns).
A script is a list of steps: `('text', piece)`, `('start', i)`, `('args', i, piece)`, `('stop', i)`, for calls
`calls[i] = (id, name, arguments as a dict)`. Gemini sends each call whole, at its `stop`.
"""
from __future__ import annotations

import json

import httpx, httpx2

__all__ = ['script', 'events', 'sse', 'chat_client', 'anthropic_client', 'gemini_client', 'split']

def split(text: str, cuts) -> list[str]:
    "`text` cut at the sorted positions `cuts`"
    cuts = sorted({c for c in cuts if 0 < c < len(text)})
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]

def script(calls: list, texts=(), pieces=None) -> list:
    "Text first, then each call started, its argument text in `pieces[i]` (default whole), and stopped; calls one after another"
    steps = [('text', t) for t in texts]
    for i, (_, _, args) in enumerate(calls):
        steps += [('start', i), *[('args', i, p) for p in (pieces[i] if pieces else [json.dumps(args)])], ('stop', i)]
    return steps

def _chat(calls, steps):
    def chunk(delta, finish=None):
        return {'id': 'chatcmpl-1', 'object': 'chat.completion.chunk', 'created': 0, 'model': 'gpt-4.1',
                'choices': [{'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish}]}
    out = [chunk({'role': 'assistant', 'content': '', 'refusal': None})]
    for s in steps:
        if s[0] == 'text': out.append(chunk({'content': s[1]}))
        elif s[0] == 'start':
            cid, nm, _ = calls[s[1]]
            out.append(chunk({'tool_calls': [{'index': s[1], 'id': cid, 'type': 'function', 'function': {'name': nm, 'arguments': ''}}]}))
        elif s[0] == 'args': out.append(chunk({'tool_calls': [{'index': s[1], 'function': {'arguments': s[2]}}]}))
    out.append(chunk({}, 'tool_calls' if calls else 'stop'))
    return out

def _responses(calls, steps):
    seq, out, texts = iter(range(10**6)), [], [s[1] for s in steps if s[0] == 'text']
    def ev(t, **kw): out.append({'type': t, 'sequence_number': next(seq), **kw})
    resp = {'id': 'resp_1', 'object': 'response', 'created_at': 0, 'model': 'gpt-4.1', 'status': 'in_progress', 'output': [],
            'parallel_tool_calls': True, 'tool_choice': 'auto', 'tools': []}
    ev('response.created', response=resp)
    base = 1 if texts else 0  # a message item first, then the calls
    args = {i: '' for i in range(len(calls))}
    items = {}
    def fc(i, status):
        cid, nm, _ = calls[i]
        return {'type': 'function_call', 'id': f'fc_{i}', 'call_id': cid, 'name': nm, 'arguments': args[i], 'status': status}
    if texts:
        msg = {'type': 'message', 'id': 'msg_1', 'role': 'assistant', 'status': 'in_progress', 'content': []}
        ev('response.output_item.added', output_index=0, item=msg)
        ev('response.content_part.added', item_id='msg_1', output_index=0, content_index=0, part={'type': 'output_text', 'text': '', 'annotations': []})
    for s in steps:
        if s[0] == 'text': ev('response.output_text.delta', item_id='msg_1', output_index=0, content_index=0, delta=s[1], logprobs=[])
        elif s[0] == 'start': ev('response.output_item.added', output_index=base + s[1], item=fc(s[1], 'in_progress'))
        elif s[0] == 'args':
            args[s[1]] += s[2]
            ev('response.function_call_arguments.delta', item_id=f'fc_{s[1]}', output_index=base + s[1], delta=s[2])
        elif s[0] == 'stop':
            i = s[1]
            ev('response.function_call_arguments.done', item_id=f'fc_{i}', output_index=base + i, arguments=args[i], name=calls[i][1])
            items[base + i] = fc(i, 'completed')
            ev('response.output_item.done', output_index=base + i, item=items[base + i])
    if texts:
        text = ''.join(texts)
        part = {'type': 'output_text', 'text': text, 'annotations': [], 'logprobs': []}
        ev('response.output_text.done', item_id='msg_1', output_index=0, content_index=0, text=text, logprobs=[])
        ev('response.content_part.done', item_id='msg_1', output_index=0, content_index=0, part=part)
        items[0] = {'type': 'message', 'id': 'msg_1', 'role': 'assistant', 'status': 'completed', 'content': [part]}
        ev('response.output_item.done', output_index=0, item=items[0])
    ev('response.completed', response={**resp, 'status': 'completed', 'output': [items[k] for k in sorted(items)]})
    return out

def _anthropic(calls, steps):
    texts = [s[1] for s in steps if s[0] == 'text']
    out = [{'type': 'message_start', 'message': {'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'content': [], 'model': 'claude',
                                                 'stop_reason': None, 'stop_sequence': None, 'usage': {'input_tokens': 1, 'output_tokens': 1}}}]
    base = 1 if texts else 0
    if texts: out.append({'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}})
    for s in steps:
        if s[0] == 'text': out.append({'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': s[1]}})
        elif s[0] == 'start':
            cid, nm, _ = calls[s[1]]
            if texts and s[1] == 0: out.append({'type': 'content_block_stop', 'index': 0})
            out.append({'type': 'content_block_start', 'index': base + s[1], 'content_block': {'type': 'tool_use', 'id': cid, 'name': nm, 'input': {}}})
        elif s[0] == 'args':
            out.append({'type': 'content_block_delta', 'index': base + s[1], 'delta': {'type': 'input_json_delta', 'partial_json': s[2]}})
        elif s[0] == 'stop': out.append({'type': 'content_block_stop', 'index': base + s[1]})
    if texts and not calls: out.append({'type': 'content_block_stop', 'index': 0})
    out += [{'type': 'message_delta', 'delta': {'stop_reason': 'tool_use' if calls else 'end_turn', 'stop_sequence': None},
             'usage': {'output_tokens': 5}}, {'type': 'message_stop'}]
    return out

def _gemini(calls, steps):
    def chunk(part, finish=None):
        c = {'content': {'role': 'model', 'parts': [part] if part else []}, 'index': 0, **({'finishReason': finish} if finish else {})}
        return {'candidates': [c], 'modelVersion': 'gemini-2.5-flash', 'responseId': 'r1'}
    out = []
    for s in steps:
        if s[0] == 'text': out.append(chunk({'text': s[1]}))
        elif s[0] == 'stop':
            cid, nm, args = calls[s[1]]
            out.append(chunk({'functionCall': {**({'id': cid} if cid else {}), 'name': nm, 'args': args}}))
    out.append(chunk(None, 'STOP'))
    out[-1]['usageMetadata'] = {'promptTokenCount': 1, 'candidatesTokenCount': 1, 'totalTokenCount': 2}
    return out

_makers = {'openai': _chat, 'openai_responses': _responses, 'anthropic': _anthropic, 'gemini': _gemini}

def events(provider: str, calls: list, steps: list) -> list[dict]:
    "The events `provider` sends for `steps`, in their JSON form"
    return _makers[provider](calls, steps)

def sse(provider: str, evs: list[dict]) -> bytes:
    "The server-sent-event body carrying `evs`"
    if provider in ('openai_responses', 'anthropic'):
        return b''.join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in evs)
    body = b''.join(f'data: {json.dumps(e)}\n\n'.encode() for e in evs)
    return body + (b'data: [DONE]\n\n' if provider == 'openai' else b'')

def _transport(http, body, seen: list):
    "Answers each request with `body`, or with the next of a list of bodies; keeps the requests in `seen`"
    def answer(request):
        seen.append(request)
        b = body[len(seen) - 1] if isinstance(body, list) else body
        return http.Response(200, headers={'content-type': 'text/event-stream'}, content=b)
    return http.MockTransport(answer)

def chat_client(body: bytes, seen: list=None, asynchronous: bool=False):
    "An OpenAI client whose every request is answered with `body` (both Chat Completions and Responses)"
    import openai
    http = (httpx.AsyncClient if asynchronous else httpx.Client)(transport=_transport(httpx, body, [] if seen is None else seen))
    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return cls(api_key='test', base_url='http://model.test/v1', http_client=http, max_retries=0)

def anthropic_client(body: bytes, seen: list=None, asynchronous: bool=False):
    "An Anthropic client (it speaks `httpx2`) whose every request is answered with `body`"
    import anthropic
    http = (httpx2.AsyncClient if asynchronous else httpx2.Client)(transport=_transport(httpx2, body, [] if seen is None else seen))
    cls = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    return cls(api_key='test', base_url='http://model.test', http_client=http, max_retries=0)

def gemini_client(body: bytes, seen: list=None, asynchronous: bool=False):
    "A google-genai client whose every request is answered with `body`"
    from google import genai
    t = _transport(httpx, body, [] if seen is None else seen)
    opts = genai.types.HttpOptions(base_url='http://model.test', **({'httpx_async_client': httpx.AsyncClient(transport=t)}
                                                                    if asynchronous else {'httpx_client': httpx.Client(transport=t)}))
    return genai.Client(api_key='test', http_options=opts)
