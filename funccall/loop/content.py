"""Rich tool results: images, audio and files, and the form each provider takes them in.

A tool returns an `Image`, `Audio` or `File` (bytes, or a file read when the code says so, with a MIME type), alone or
in a list with text and other values. `messages.tool_results` writes it as each provider takes it: Anthropic `image`/`document`
blocks in the `tool_result`, Responses `input_image`/`input_file` items in the `function_call_output`, Gemini
`inline_data` parts of the function response, MCP image, audio and embedded-resource content. Chat Completions
takes only text in a tool message: the text goes there, saying so, and the media follow in one user message.
What a provider can't take at all (audio in a tool result, for most) is replaced by a line of text saying what was left out.

Files are the developer's decision. A `str` is never a path (it is refused, unless a `data:` URL); a file is read only
from a `pathlib.Path` or `Image.from_path(path, root=..., max_bytes=...)`, at once, in the tool: only a regular file
(opened non-blocking, checked with `fstat` on the open descriptor: no FIFO, device or folder), at most `max_bytes`
(reading no more than one byte past it), and with `root` only a file whose real path is inside that folder (opened a
folder at a time with O_NOFOLLOW where the OS allows, so a symlink swapped in after the check is refused too). A path
over 4,096 characters is refused unread. `root` confines names, not inodes: a hard link or bind mount inside it is
served. Media that come from outside (a `data:` URL's type, an MCP server's items, `from_json`'s data) are checked:
a MIME type is a `type/subtype` name, and base64 over `MAX_BYTES` is never decoded.
"""
from __future__ import annotations

import base64, binascii, mimetypes, os, re, stat
from pathlib import Path
from typing import Any, Callable, TypeVar, Union

from ..core._inputs import short
from ..core._typing import JsonDict

__all__ = ['Content', 'Image', 'Audio', 'File', 'Part', 'PathRefused', 'MAX_BYTES', 'parts']

MAX_BYTES: int = 32 * 2**20
"The most bytes a result reads from a file unless `max_bytes=` says otherwise (32 MiB: Claude's limit for a PDF)"
_MAX_PATH = 4096  # the longest path read (Linux's PATH_MAX): resolving a longer one, `a/../` repeated, costs quadratic time
_MIME = re.compile(r'[A-Za-z0-9][\w!#$&^.+-]{0,126}/[A-Za-z0-9][\w!#$&^.+-]{0,126}')  # RFC 6838's names, no parameters

class PathRefused(ValueError):
    "A file a result was asked to read is outside its folder, not a regular file, too large, or can't be read"

class Content:
    """Media in a tool result: the bytes and a MIME type. Raw data is `bytes` (or a `data:` URL); a file is read only
    when the code says so, with a `pathlib.Path` or `from_path`: a `str` is never taken for a path"""
    kind: str = 'file'                               # 'image', 'audio' or 'file': how a provider takes it
    default_mime: str = 'application/octet-stream'   # the MIME type when nothing tells

    def __init__(
        self,
        data: bytes | str | Path,  # the bytes, a `data:` URL, or a `Path` to read now (as `from_path` does)
        mime_type: str | None=None,  # e.g. 'image/png'; default: the data URL's, or from the path's suffix
        name: str | None=None,       # a file name to show (default: the path's)
    ):
        self.path: Path | None = None  # the file it was read from
        if isinstance(data, (bytes, bytearray, memoryview)): self._data = bytes(data)
        elif isinstance(data, str): self._data, mime_type = _data_url(data, type(self).__name__, mime_type)
        elif isinstance(data, os.PathLike):
            p = _path(data, type(self).__name__)
            self._data, self.path = _read(p, None, MAX_BYTES, type(self).__name__), Path(p)
        else: raise TypeError(f"{type(self).__name__} takes bytes, a data URL or a pathlib.Path, not {type(data).__name__}")
        self.name: str | None = name or (self.path.name if self.path else None)
        self.mime_type: str = mime_type or (self.path and mimetypes.guess_type(self.path.name)[0]) or self.default_mime

    @classmethod
    def from_path(
        cls: type[_C],
        path: str | Path,            # the file: relative to `root` when given
        mime_type: str | None=None,  # default: from the path's suffix
        name: str | None=None,       # default: the path's file name
        root: str | Path | None=None,  # a folder the file must be in, its real path (symlinks followed) included
        max_bytes: int=MAX_BYTES,    # the most bytes to read; a larger file is refused
    ) -> _C:
        """Read a file into a result now, in the tool, so a refusal is the tool's error. Only a regular file is read (not
        a FIFO, device or folder), at most `max_bytes` of it; with `root`, only one whose real path is inside `root`"""
        p = _path(path, cls.__name__)  # (asked once: a PathLike that answers differently each time reads what it names)
        c = cls(_read(p, root, max_bytes, cls.__name__), mime_type or _guess(p), name or Path(p).name)
        c.path = Path(p)
        return c

    @property
    def data(self) -> bytes:
        "The bytes, as read when the result was made"
        return self._data

    def b64(self) -> str: return base64.b64encode(self._data).decode()
    def data_url(self) -> str: return f'data:{self.mime_type};base64,{self.b64()}'

    def __repr__(self) -> str:
        where = f', {short(str(self.path), 120)}' if self.path else ''
        return f"{type(self).__name__}({self.mime_type}, {len(self._data)} bytes{where})"

    def __str__(self) -> str: return f"[{self.kind} {self.name or ''}{' ' if self.name else ''}({self.mime_type})]"

    def __eq__(self, o: object) -> bool: return type(o) is type(self) and (o.mime_type, o.data) == (self.mime_type, self.data)
    __hash__: None = None  # type: ignore[assignment]  # (equal by value, and mutable: unhashable, as a list is)

def _guess(path: str | os.PathLike[str]) -> str | None: return mimetypes.guess_type(Path(path).name)[0]

def _data_url(s: str, who: str, mime_type: str | None) -> tuple[bytes, str | None]:
    "The bytes and MIME type of a `data:...;base64,...` URL; any other str is refused, so no str is read as a path"
    head, sep, body = s.partition(',')
    if not (s.startswith('data:') and sep and head.endswith(';base64')):
        raise TypeError(f"{who} got the str {s[:60]!r}: a str is never read as a file. Pass bytes, a 'data:...;base64,' URL, "
                        f"or, to read a file, pathlib.Path(...) or {who}.from_path(path, root=...)")
    try: data = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError): raise ValueError(f"{who}: the data URL's base64 is malformed") from None
    if (said := head[5:-7]) and not _MIME.fullmatch(said):  # (it goes into each provider's request and the model's text)
        raise ValueError(f"{who}: the data URL's MIME type {short(said, 60)} is not a type/subtype name")
    return data, mime_type or said or None

_C = TypeVar('_C', bound='Content')
Part = Union[str, Content]  # a part of a result that holds media: text, or a medium

# --- reading a file, as the developer allowed ------------------------------------------------------------------

# non-blocking: opening a FIFO can't hang; no controlling terminal from a tty
_OPEN = os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_NOCTTY', 0) | getattr(os, 'O_BINARY', 0)
_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)
_DIR = os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | _NOFOLLOW
_WALK = os.open in os.supports_dir_fd and _NOFOLLOW != 0  # step down from the root one folder at a time, never through a symlink

def _path(path: Any, who: str) -> str:
    "`path` as a str, asked of a `PathLike` once; PathRefused when longer than any the OS opens"
    if not isinstance(path, (str, os.PathLike)): raise TypeError(f"{who}.from_path takes a str or a Path, not {type(path).__name__}")
    p = os.fsdecode(os.fspath(path))
    if len(p) > _MAX_PATH: raise PathRefused(f"{who}: the path {short(p, 60)} is longer than {_MAX_PATH} characters")
    return p

def _read(path: str, root: str | os.PathLike[str] | None, limit: int, who: str) -> bytes:
    "A regular file's bytes, at most `limit` of them; with `root`, from inside `root` only. PathRefused otherwise"
    shown = short(path, 120)
    try: fd = _open(path, root, f"{who}: {shown}")
    except PathRefused: raise
    except (OSError, ValueError) as e: raise PathRefused(f"{who}: can't read {shown}: {getattr(e, 'strerror', None) or e}") from None
    try:
        _regular(st := os.fstat(fd), f"{who}: {shown}")
        if st.st_size > limit: raise PathRefused(f"{who}: {shown} is larger than {limit} bytes")
        return _read_upto(fd, limit, who, shown)
    finally: os.close(fd)

def _open(path: str, root: str | os.PathLike[str] | None, where: str) -> int:
    "A file descriptor for `path`, checked to be under `root` (its real path) when given"
    if root is None:
        _regular(os.stat(path), where)  # a device is not even opened (opening some does something); fstat checks again after
        return os.open(path, _OPEN)
    top = os.path.realpath(_path(root, 'root'))
    real = os.path.realpath(os.path.join(top, path))
    if not _inside(real, top): raise PathRefused(f"{where} is outside the folder the tool reads from")
    if not _WALK:
        _regular(os.stat(real), where)
        return os.open(real, _OPEN | _NOFOLLOW)
    return _open_under(top, os.path.relpath(real, top).split(os.sep), where)

def _inside(real: str, top: str) -> bool:
    try: return os.path.commonpath([top, real]) == top
    except ValueError: return False  # another drive

def _open_under(top: str, parts: list, where: str) -> int:
    "Open `top/parts...` a folder at a time with O_NOFOLLOW: a folder swapped for a symlink since the check is refused"
    fd = os.open(top, _DIR)
    try:
        for p in parts[:-1]:
            nxt = os.open(p, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
        _regular(os.stat(parts[-1], dir_fd=fd, follow_symlinks=False), where)
        return os.open(parts[-1], _OPEN | _NOFOLLOW, dir_fd=fd)
    finally: os.close(fd)

def _regular(st: os.stat_result, where: str):
    if not stat.S_ISREG(st.st_mode): raise PathRefused(f"{where} is not a regular file")

def _read_upto(fd: int, limit: int, who: str, shown: str) -> bytes:
    "At most `limit` bytes, reading no more than `limit + 1`: a file that grows, or says it's empty (/proc), stays bounded"
    chunks, n = [], 0
    while n <= limit:
        b = os.read(fd, min(1 << 20, limit + 1 - n))
        if not b: break
        chunks.append(b)
        n += len(b)
    if n > limit: raise PathRefused(f"{who}: {shown} is larger than {limit} bytes")
    return b''.join(chunks)

class Image(Content):
    "An image in a tool result (PNG, JPEG, GIF, WebP)"
    kind: str = 'image'
    default_mime: str = 'image/png'

class Audio(Content):
    "Audio in a tool result (WAV, MP3)"
    kind: str = 'audio'
    default_mime: str = 'audio/wav'

class File(Content):
    "A file in a tool result: a PDF or text document, or any other bytes"
    kind: str = 'file'

_MCP_KEYS = {'type', 'data', 'mimeType', 'annotations', '_meta'}

_B64_LONGEST = 4 * -(-MAX_BYTES // 3)  # the base64 of `MAX_BYTES` bytes: 4 characters a 3 bytes, padded

def _b64(s: str) -> bytes | None:
    "The bytes of base64 text `s`; None when it is malformed or would decode to more than `MAX_BYTES` (then not decoded)"
    if len(s) > _B64_LONGEST: return None
    try: data = base64.b64decode(s, validate=True)
    except ValueError: return None
    return data if len(data) <= MAX_BYTES else None

def _from_mcp(x: Any) -> Any:
    """An MCP image or audio content item, as `MCPClient` gives it (`{'type': 'image', 'data': base64, 'mimeType'}`), as
    `Content`; over `MAX_BYTES`, a line saying it was left out; `x` itself when it is no such item"""
    if not (type(x) is dict and x.get('type') in ('image', 'audio') and set(x) <= _MCP_KEYS
            and isinstance(x.get('data'), str) and isinstance(x.get('mimeType'), str) and _MIME.fullmatch(x['mimeType'])): return x
    if (data := _b64(x['data'])) is not None: return (Image if x['type'] == 'image' else Audio)(data, x['mimeType'])
    if len(x['data']) <= _B64_LONGEST: return x  # malformed: not an item (a server's own dict, maybe)
    return f"[{x['type']} ({x['mimeType']}) of {len(x['data']) * 3 // 4} bytes, over the {MAX_BYTES} a result takes: left out]"

def parts(
    v: Any,                  # a tool's return value
    text: Callable[[Any], str]=str,  # how to turn a part that isn't media into text (the tool's `to_text`)
) -> list[Part] | None:      # text and `Content` parts, in order; None when `v` holds no media
    """A result's parts when it holds media: `v` itself, or a list or tuple holding at least one `Content`. An MCP
    server's image and audio items (what an `MCPClient` tool returns) count as media too, so they pass through"""
    if isinstance(v, Content): return [v]
    if type(v) is dict and v.get('type') in ('image', 'audio'): v = [v]
    if isinstance(v, (list, tuple)) and v:
        ps = [_from_mcp(x) for x in v]
        if any(p is not x for p, x in zip(ps, v)) or any(isinstance(p, Content) for p in ps):  # (an item too large is its note)
            return [x if isinstance(x, (Content, str)) else text(x) for x in ps]
    return None

_KINDS: dict[str, type[Content]] = {'image': Image, 'audio': Audio, 'file': File}

def to_json(ps: list[Part]) -> list[str | JsonDict]:
    "Parts as JSON data (media as base64, marked by a `funccall_content` key), for a result kept while a call waits"
    return [x if isinstance(x, str) else {'funccall_content': x.kind, 'mime_type': x.mime_type, 'name': x.name, 'data': x.b64()} for x in ps]

def from_json(v: Any) -> Any:
    "`to_json`'s parts back, media as `Content`; any other value unchanged. ValueError for a medium that can't be one"
    if not (isinstance(v, list) and any(isinstance(x, dict) and x.get('funccall_content') in _KINDS for x in v)): return v
    return [_medium(x) if isinstance(x, dict) and x.get('funccall_content') in _KINDS else x for x in v]

def _medium(x: JsonDict) -> Content:
    "One medium of `to_json`'s, checked: the data may come back from wherever the application kept it"
    data, mime, name = x.get('data'), x.get('mime_type'), x.get('name')
    if not (isinstance(data, str) and isinstance(mime, str) and _MIME.fullmatch(mime) and (name is None or isinstance(name, str))):
        raise ValueError(f"Not a medium's data (needs base64 'data' and a 'mime_type'): {short(x, 100)}")
    if (b := _b64(data)) is None: raise ValueError(f"A medium's data is not base64 of at most {MAX_BYTES} bytes: {short(data, 60)}")
    return _KINDS[x['funccall_content']](b, mime, name)

def text_of(ps: list[Part], note: Callable[[Content], str]=str) -> str:
    "The parts as one text, each medium as `note(c)`"
    return '\n'.join(x if isinstance(x, str) else note(x) for x in ps)

def _left_out(c: Content, who: str) -> str: return f"{c} ({who} can't take {c.kind} in a tool result: left out)"

# --- each provider's form -------------------------------------------------------------------------------

def anthropic(ps: list[Part]) -> list[JsonDict]:
    "`tool_result` content blocks: text, `image` (base64), `document` (a PDF as base64, a text file as text)"
    res: list[JsonDict] = []
    for x in ps:
        if isinstance(x, str): res.append({'type': 'text', 'text': x})
        elif isinstance(x, Image): res.append({'type': 'image', 'source': {'type': 'base64', 'media_type': x.mime_type, 'data': x.b64()}})
        elif isinstance(x, File) and x.mime_type == 'application/pdf':
            res.append({'type': 'document', 'source': {'type': 'base64', 'media_type': 'application/pdf', 'data': x.b64()}})
        elif isinstance(x, File) and x.mime_type.startswith('text/'):
            res.append({'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain', 'data': x.data.decode('utf-8', 'replace')}})
        else: res.append({'type': 'text', 'text': _left_out(x, 'Claude')})
    return res

def responses(ps: list[Part]) -> list[JsonDict]:
    "`function_call_output` items: `input_text`, `input_image` and `input_file`, media as data URLs"
    res: list[JsonDict] = []
    for x in ps:
        if isinstance(x, str): res.append({'type': 'input_text', 'text': x})
        elif isinstance(x, Image): res.append({'type': 'input_image', 'image_url': x.data_url(), 'detail': 'auto'})
        elif isinstance(x, File): res.append({'type': 'input_file', 'file_data': x.data_url(), 'filename': x.name or 'file'})
        else: res.append({'type': 'input_text', 'text': _left_out(x, 'OpenAI')})
    return res

def gemini(ps: list[Part]) -> tuple[str, list[JsonDict]]:
    "The text for `response.output`, and the function response's `inline_data` parts (base64 text, as in Gemini's JSON, so a conversation stays JSON)"
    return text_of(ps), [{'inline_data': {'mime_type': x.mime_type, 'data': x.b64()}} for x in ps if isinstance(x, Content)]

_AUDIO_FORMATS: dict[str, str] = {'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3'}

def chat(ps: list[Part], call_id: str) -> tuple[str, list[JsonDict]]:
    "The tool message's text (saying where the media went), and the parts of the user message that carries them"
    media: list[JsonDict] = []
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

def mcp(ps: list[Part]) -> list[JsonDict]:
    "MCP content items: text, image, audio, and other files as embedded resources"
    res: list[JsonDict] = []
    for x in ps:
        if isinstance(x, str): res.append({'type': 'text', 'text': x})
        elif isinstance(x, (Image, Audio)): res.append({'type': x.kind, 'data': x.b64(), 'mimeType': x.mime_type})
        else: res.append({'type': 'resource', 'resource': {'uri': f'file:///{x.name or "file"}', 'mimeType': x.mime_type, 'blob': x.b64()}})
    return res
