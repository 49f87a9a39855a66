"""Rich tool results: images, audio and files, and the form each provider takes them in.

A tool returns an `Image`, `Audio` or `File` (bytes or a path, with a MIME type), alone or in a list with text
and other values. `messages.tool_results` writes it as each provider takes it: Anthropic `image`/`document`
blocks in the `tool_result`, Responses `input_image`/`input_file` items in the `function_call_output`, Gemini
`inline_data` parts of the function response, MCP image, audio and embedded-resource content. Chat Completions
takes only text in a tool message: the text goes there, saying so, and the media follow in one user message.
What a provider can't take at all (audio in a tool result, for most) is replaced by a line of text saying what was left out.
"""
from __future__ import annotations

import base64, mimetypes
from pathlib import Path
from typing import Callable

__all__ = ['Content', 'Image', 'Audio', 'File', 'parts']

class Content:
    "Media in a tool result: `data` (bytes) or a `path` to read them from, and a MIME type (guessed from the path's suffix)"
    kind = 'file'
    default_mime = 'application/octet-stream'

    def __init__(
        self,
        data: bytes | str | Path,  # the bytes, or a path to a file holding them (read when sent)
        mime_type: str | None=None,  # e.g. 'image/png'; default: from the path's suffix
        name: str | None=None,       # a file name to show (default: the path's)
    ):
        if isinstance(data, (bytes, bytearray, memoryview)): self._data, self.path = bytes(data), None
        elif isinstance(data, (str, Path)): self._data, self.path = None, Path(data)
        else: raise TypeError(f"{type(self).__name__} takes bytes or a path, not {type(data).__name__}")
        self.name = name or (self.path.name if self.path else None)
        self.mime_type = mime_type or (self.path and mimetypes.guess_type(self.path.name)[0]) or self.default_mime

    @property
    def data(self) -> bytes:
        "The bytes (read from `path` on each use, so a file changed since stays current)"
        return self._data if self._data is not None else self.path.read_bytes()

    def b64(self) -> str: return base64.b64encode(self.data).decode()
    def data_url(self) -> str: return f'data:{self.mime_type};base64,{self.b64()}'

    def __repr__(self):
        size = f'{len(self._data)} bytes' if self._data is not None else str(self.path)
        return f"{type(self).__name__}({self.mime_type}, {size})"

    def __str__(self): return f"[{self.kind} {self.name or ''}{' ' if self.name else ''}({self.mime_type})]"

    def __eq__(self, o): return type(o) is type(self) and (o.mime_type, o.data) == (self.mime_type, self.data)
    __hash__ = None

class Image(Content):
    "An image in a tool result (PNG, JPEG, GIF, WebP)"
    kind, default_mime = 'image', 'image/png'

class Audio(Content):
    "Audio in a tool result (WAV, MP3)"
    kind, default_mime = 'audio', 'audio/wav'

class File(Content):
    "A file in a tool result: a PDF or text document, or any other bytes"
    kind = 'file'

_MCP_KEYS = {'type', 'data', 'mimeType', 'annotations', '_meta'}

def _from_mcp(x):
    "An MCP image or audio content item, as `MCPClient` gives it (`{'type': 'image', 'data': base64, 'mimeType'}`), as `Content`"
    if not (type(x) is dict and x.get('type') in ('image', 'audio') and set(x) <= _MCP_KEYS
            and isinstance(x.get('data'), str) and isinstance(x.get('mimeType'), str)): return x
    try: data = base64.b64decode(x['data'], validate=True)
    except ValueError: return x
    return (Image if x['type'] == 'image' else Audio)(data, x['mimeType'])

def parts(
    v,                       # a tool's return value
    text: Callable=str,      # how to turn a part that isn't media into text (the tool's `to_text`)
) -> list | None:            # text and `Content` parts, in order; None when `v` holds no media
    """A result's parts when it holds media: `v` itself, or a list or tuple holding at least one `Content`. An MCP
    server's image and audio items (what an `MCPClient` tool returns) count as media too, so they pass through"""
    if isinstance(v, Content): return [v]
    if type(v) is dict and v.get('type') in ('image', 'audio'): v = [v]
    if isinstance(v, (list, tuple)) and v:
        ps = [_from_mcp(x) for x in v]
        if any(isinstance(x, Content) for x in ps): return [x if isinstance(x, (Content, str)) else text(x) for x in ps]
    return None

_KINDS = {'image': Image, 'audio': Audio, 'file': File}

def to_json(ps: list) -> list:
    "Parts as JSON data (media as base64, marked by a `funccall_content` key), for a result kept while a call waits"
    return [x if isinstance(x, str) else {'funccall_content': x.kind, 'mime_type': x.mime_type, 'name': x.name, 'data': x.b64()} for x in ps]

def from_json(v):
    "`to_json`'s parts back, media as `Content`; any other value unchanged"
    if not (isinstance(v, list) and any(isinstance(x, dict) and x.get('funccall_content') in _KINDS for x in v)): return v
    return [_KINDS[x['funccall_content']](base64.b64decode(x['data']), x['mime_type'], x.get('name'))
            if isinstance(x, dict) and x.get('funccall_content') in _KINDS else x for x in v]

def text_of(ps: list, note: Callable=str) -> str:
    "The parts as one text, each medium as `note(c)`"
    return '\n'.join(x if isinstance(x, str) else note(x) for x in ps)

def _left_out(c: Content, who: str) -> str: return f"{c} ({who} can't take {c.kind} in a tool result: left out)"

# --- each provider's form -------------------------------------------------------------------------------

def anthropic(ps: list) -> list[dict]:
    "`tool_result` content blocks: text, `image` (base64), `document` (a PDF as base64, a text file as text)"
    res = []
    for x in ps:
        if isinstance(x, str): res.append({'type': 'text', 'text': x})
        elif isinstance(x, Image): res.append({'type': 'image', 'source': {'type': 'base64', 'media_type': x.mime_type, 'data': x.b64()}})
        elif isinstance(x, File) and x.mime_type == 'application/pdf':
            res.append({'type': 'document', 'source': {'type': 'base64', 'media_type': 'application/pdf', 'data': x.b64()}})
        elif isinstance(x, File) and x.mime_type.startswith('text/'):
            res.append({'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain', 'data': x.data.decode('utf-8', 'replace')}})
        else: res.append({'type': 'text', 'text': _left_out(x, 'Claude')})
    return res

def responses(ps: list) -> list[dict]:
    "`function_call_output` items: `input_text`, `input_image` and `input_file`, media as data URLs"
    res = []
    for x in ps:
        if isinstance(x, str): res.append({'type': 'input_text', 'text': x})
        elif isinstance(x, Image): res.append({'type': 'input_image', 'image_url': x.data_url(), 'detail': 'auto'})
        elif isinstance(x, File): res.append({'type': 'input_file', 'file_data': x.data_url(), 'filename': x.name or 'file'})
        else: res.append({'type': 'input_text', 'text': _left_out(x, 'OpenAI')})
    return res

def gemini(ps: list) -> tuple[str, list[dict]]:
    "The text for `response.output`, and the function response's `inline_data` parts (base64 text, as in Gemini's JSON, so a conversation stays JSON)"
    return text_of(ps), [{'inline_data': {'mime_type': x.mime_type, 'data': x.b64()}} for x in ps if isinstance(x, Content)]

_AUDIO_FORMATS = {'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3'}

def chat(ps: list, call_id: str) -> tuple[str, list[dict]]:
    "The tool message's text (saying where the media went), and the parts of the user message that carries them"
    media = []
    for x in ps:
        if isinstance(x, Image): media.append({'type': 'image_url', 'image_url': {'url': x.data_url()}})
        elif isinstance(x, Audio) and x.mime_type in _AUDIO_FORMATS:
            media.append({'type': 'input_audio', 'input_audio': {'data': x.b64(), 'format': _AUDIO_FORMATS[x.mime_type]}})
        elif isinstance(x, File): media.append({'type': 'file', 'file': {'file_data': x.data_url(), 'filename': x.name or 'file'}})
    sent = {id(x) for x in ps if isinstance(x, Content)} if media else set()
    note = lambda c: f"{c} (sent in the next user message)" if id(c) in sent and _chat_ok(c) else _left_out(c, 'OpenAI Chat Completions')
    head = [{'type': 'text', 'text': f'The media returned by tool call {call_id}:'}] if media else []
    return text_of(ps, note), head + media

def _chat_ok(c: Content) -> bool: return not isinstance(c, Audio) or c.mime_type in _AUDIO_FORMATS

def mcp(ps: list) -> list[dict]:
    "MCP content items: text, image, audio, and other files as embedded resources"
    res = []
    for x in ps:
        if isinstance(x, str): res.append({'type': 'text', 'text': x})
        elif isinstance(x, (Image, Audio)): res.append({'type': x.kind, 'data': x.b64(), 'mimeType': x.mime_type})
        else: res.append({'type': 'resource', 'resource': {'uri': f'file:///{x.name or "file"}', 'mimeType': x.mime_type, 'blob': x.b64()}})
    return res
