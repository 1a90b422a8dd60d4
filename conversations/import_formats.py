"""Read conversations exported by other apps, one at a time, as this app's export shape.

`read_conversations(file)` detects the file from its content — this app's export,
ChatGPT's data export (`conversations.json` or its zip), Claude's `conversations.json`,
Open WebUI's chat export, LibreChat's conversation export — and yields each conversation
as a dict in the shape `imports.ExportFile` validates (the one validation layer), with
`messages[].id/parent_id` keeping the other app's tree and `current_message_id` its leaf.

A file is streamed (ijson): a ChatGPT export of every conversation a user ever had is one
JSON array, so memory holds one conversation at a time, never the file. Each format's
reader is written from the app's public export format (the fixtures in
tests/conversations/import_fixtures/ are exports we wrote in those shapes); what a
conversation holds that this app cannot (images, other apps' tool calls, hidden system
turns) is dropped, and each message says so in `metadata.import.notes`.
"""

from __future__ import annotations

import heapq
import io
import math
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import IO, Any

import ijson
from ijson.common import ObjectBuilder

from core import schemas
from core.errors import ServiceError, TooLarge

ZIP_MAGIC = b"PK\x03\x04"
MODEL_MAX_CHARS = 100
TITLE_MAX_CHARS = 200
FORMATS = ("chatsite", "chatgpt", "claude", "openwebui", "librechat")
# Deeper than any export of these apps; stored JSON (parts, metadata) is held to 32 levels.
MAX_DEPTH = 64


class InvalidImport(ServiceError):
    code = "invalid_import"
    status = 400


class BoundedReader(io.RawIOBase):
    """A binary stream that refuses to read past `total` bytes, or past `per_item` bytes
    since the last `mark()` (one conversation of a many-conversation file)."""

    def __init__(self, raw: IO[bytes], *, total: int, per_item: int) -> None:
        self.raw, self.total, self.per_item = raw, total, per_item
        self.read_bytes = 0
        self.since_mark = 0

    def readable(self) -> bool:
        return True

    def mark(self) -> None:
        self.since_mark = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(65536 if size is None or size < 0 else size)
        self.read_bytes += len(data)
        self.since_mark += len(data)
        if self.read_bytes > self.total:
            raise TooLarge(f"The file is larger than {self.total} bytes.")
        if self.since_mark > self.per_item:
            raise TooLarge(f"A conversation in the file is larger than {self.per_item} bytes.")
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def read_conversations(
    source: IO[bytes], *, max_bytes: int, max_conversation_bytes: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield `(format, conversation in export shape)` for every conversation of the file."""
    head = source.read(4)
    source.seek(0)
    if head == ZIP_MAGIC:
        yield from _read_zip(
            source, max_bytes=max_bytes, max_conversation_bytes=max_conversation_bytes
        )
        return
    stream = BoundedReader(source, total=max_bytes, per_item=max_conversation_bytes)
    yield from _read_json(stream)


def _read_zip(
    source: IO[bytes], *, max_bytes: int, max_conversation_bytes: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    """A ChatGPT or Claude export zip: its `conversations.json` (or its only .json)."""
    try:
        archive = zipfile.ZipFile(source)
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise InvalidImport(f"file: not a readable zip archive ({exc})"[:300]) from None
    wanted = [n for n in names if n.rsplit("/", 1)[-1] == "conversations.json"]
    if not wanted:
        wanted = [n for n in names if n.lower().endswith(".json")]
    if len(wanted) != 1:
        raise InvalidImport(
            "file: the zip holds no conversations.json (nor a single .json file to read)."
        )
    with archive, archive.open(wanted[0]) as member:
        # The uncompressed size counts against the limit too (a zip bomb stops here).
        stream = BoundedReader(member, total=max_bytes, per_item=max_conversation_bytes)
        yield from _read_json(stream)


def _read_json(stream: BoundedReader) -> Iterator[tuple[str, dict[str, Any]]]:
    """A JSON file: one conversation (an object) or many (an array of them)."""
    first = _first_char(stream)
    if first == "{":
        # One conversation (≤ CHAT_IMPORT_MAX_BYTES): the strict parser, which refuses
        # what yajl would quietly change (a lone surrogate escape becomes "?" there).
        chunks = []
        while chunk := stream.read(1024 * 1024):
            chunks.append(chunk)
        try:
            item = schemas.loads(b"".join(chunks))
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidImport(f"file: not valid JSON: {exc}"[:300]) from None
        fmt = detect(item, where="file")
        yield fmt, convert(fmt, item, where="file")
        return
    if first != "[":
        raise InvalidImport("file: expected a JSON object or array.")
    index = 0
    try:
        for index, item in enumerate(_values(stream, depth=1)):
            where = f"conversations[{index}]"
            fmt = detect(item, where=where)
            yield fmt, convert(fmt, item, where=where)
            stream.mark()
    except ServiceError:
        raise
    except (ijson.JSONError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidImport(
            f"file: not valid JSON near conversation {index}: {exc}"[:300]
        ) from None


def _values(stream: BoundedReader, *, depth: int) -> Iterator[Any]:
    """Yield each value found at nesting `depth` (0: the document; 1: the items of a
    top-level array), built one at a time; nesting deeper than MAX_DEPTH is refused
    before it is built (ijson's own prefixes grow with the square of the depth)."""
    level = 0
    builder: ObjectBuilder | None = None
    for event, value in ijson.basic_parse(stream, use_float=True):
        if event in ("start_map", "start_array"):
            level += 1
            if level > MAX_DEPTH:
                raise InvalidImport(f"file: JSON nested deeper than {MAX_DEPTH} levels.")
            if level == depth + 1:
                builder = ObjectBuilder()
        elif event in ("end_map", "end_array"):
            level -= 1
        if builder is not None:
            builder.event(event, value)
            if level == depth:
                yield builder.value
                builder = None
        elif level == depth and event not in ("start_map", "start_array", "end_map", "end_array"):
            yield value  # a scalar where a conversation goes (refused by `detect`)


def _first_char(stream: BoundedReader) -> str:
    """Return the first character of the JSON text (after a BOM and whitespace), and
    rewind the stream."""
    start = stream.raw.read(4096)
    stream.raw.seek(0)
    text = start.lstrip(b"\xef\xbb\xbf \t\r\n")
    return chr(text[0]) if text else ""


def detect(item: Any, *, where: str) -> str:
    """Return which app wrote this conversation, from its keys."""
    if not isinstance(item, dict):
        raise InvalidImport(f"{where}: expected a conversation object.")
    if item.get("format") == "chatsite.conversation":
        return "chatsite"
    if "mapping" in item:
        return "chatgpt"
    if "chat_messages" in item:
        return "claude"
    if isinstance(item.get("chat"), dict) and (
        "history" in item["chat"] or "messages" in item["chat"]
    ):
        return "openwebui"
    if "conversationId" in item and "messages" in item:
        return "librechat"
    raise InvalidImport(
        f"{where}: not a conversation this app can read (this app's export, ChatGPT, "
        "Claude, Open WebUI or LibreChat)."
    )


def convert(fmt: str, item: dict[str, Any], *, where: str) -> dict[str, Any]:
    """Turn one conversation of `fmt` into this app's export shape; a shape the reader does
    not expect (a list where an object goes, …) is refused naming the conversation."""
    if fmt == "chatsite":
        return item
    try:
        return READERS[fmt](item)
    except (TypeError, AttributeError, KeyError, ValueError, OverflowError) as exc:
        raise InvalidImport(
            f"{where}: not a well-formed {fmt} conversation ({exc})"[:300]
        ) from None


# --- shared helpers --------------------------------------------------------------------


def _time(value: Any) -> Any:
    """An epoch number (seconds, or milliseconds) as ISO 8601 UTC; anything else as given
    (the export schema then names it when it is not a time)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if not math.isfinite(value):
        return str(value)
    seconds = value / 1000 if abs(value) > 1e11 else value  # milliseconds since 1970
    try:
        return datetime.fromtimestamp(seconds, tz=UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return str(value)


def _label(value: Any, limit: int) -> str:
    """A short label (title, model name): text, whitespace folded, cut to `limit`."""
    return " ".join(value.split())[:limit] if isinstance(value, str) else ""


def _message(
    *,
    id: Any,
    parent_id: Any,
    role: str,
    content: Any,
    created_at: Any,
    model: Any = "",
    source: str,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"import": {"from": source, "id": str(id)}}
    if notes:
        metadata["import"]["notes"] = notes
    return {
        "id": str(id),
        "parent_id": None if parent_id is None else str(parent_id),
        "role": role,
        "content": content,
        "created_at": created_at,
        "model": _label(model, MODEL_MAX_CHARS),
        "metadata": metadata,
    }


def _as_tree(
    messages: list[dict[str, Any]], *, keep: Callable[[dict[str, Any]], bool] | None = None
) -> list[dict[str, Any]]:
    """Number messages so that each comes after its parent, oldest first among the ready
    ones; a parent not kept (or unknown) hands its children to its own parent."""
    by_id = {m["id"]: m for m in messages}
    kept = {m["id"] for m in messages if keep is None or keep(m)}

    def kept_parent(message: dict[str, Any]) -> str | None:
        parent, hops = message["parent_id"], 0
        while parent is not None and parent not in kept and hops <= len(by_id):
            parent = by_id[parent]["parent_id"] if parent in by_id else None
            hops += 1
        return parent if parent in kept else None

    children: dict[str | None, list[dict[str, Any]]] = {}
    for message in messages:
        if message["id"] in kept:
            message["parent_id"] = kept_parent(message)
            children.setdefault(message["parent_id"], []).append(message)
    ready = [(_sort_key(m), i, m) for i, m in enumerate(children.get(None, []))]
    heapq.heapify(ready)
    ordered: list[dict[str, Any]] = []
    counter = len(ready)
    while ready:
        _, _, message = heapq.heappop(ready)
        message["sequence_number"] = len(ordered) + 1
        ordered.append(message)
        for child in children.get(message["id"], []):
            counter += 1
            heapq.heappush(ready, (_sort_key(child), counter, child))
    if len(ordered) != len(kept):
        raise ValueError("the messages' parents form a loop or repeat an id")
    return ordered


def _sort_key(message: dict[str, Any]) -> str:
    created = message.get("created_at")
    return created if isinstance(created, str) else ""


def _nearest_kept(leaf: Any, messages: list[dict[str, Any]], by_parent: dict[str, Any]) -> Any:
    """Return `leaf`, or its nearest ancestor that was kept (None when none was)."""
    kept = {m["id"] for m in messages}
    hops = 0
    while leaf is not None and str(leaf) not in kept and hops <= len(by_parent):
        leaf = by_parent.get(str(leaf))
        hops += 1
    return str(leaf) if leaf is not None and str(leaf) in kept else None


# --- ChatGPT ---------------------------------------------------------------------------

CHATGPT_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}


def _chatgpt_text(content: dict[str, Any]) -> tuple[str, list[str]]:
    """Return a ChatGPT message's text and what of it could not be kept."""
    kind = content.get("content_type", "text")
    notes: list[str] = []
    if kind in ("text", "multimodal_text"):
        texts = []
        for part in content.get("parts") or []:
            if isinstance(part, str):
                texts.append(part)
            elif not isinstance(part, dict):
                raise ValueError("a message part is neither text nor an object")
            else:
                kind_of_part = str(part.get("content_type", "attachment"))
                texts.append(
                    "[image]" if kind_of_part == "image_asset_pointer" else f"[{kind_of_part}]"
                )
                notes.append(f"dropped a {kind_of_part}")
        return "\n".join(t for t in texts if t), notes
    if kind == "code":
        return f"```\n{content.get('text', '')}\n```", notes
    return "", [f"dropped {kind} content"]


def _read_chatgpt(item: dict[str, Any]) -> dict[str, Any]:
    mapping = item["mapping"]
    messages: list[dict[str, Any]] = []
    by_parent: dict[str, Any] = {}
    for node_id, node in mapping.items():
        by_parent[str(node_id)] = node.get("parent")
        raw = node.get("message")
        if not raw:
            continue
        role = CHATGPT_ROLES.get((raw.get("author") or {}).get("role", ""))
        meta = raw.get("metadata") or {}
        text, notes = _chatgpt_text(raw.get("content") or {})
        hidden = meta.get("is_visually_hidden_from_conversation") or (
            raw.get("recipient") not in (None, "all")  # a call to one of ChatGPT's tools
        )
        message = _message(
            id=node_id,
            parent_id=node.get("parent"),
            role=role or "system",
            content=text,
            created_at=_time(raw.get("create_time")),
            model=(meta.get("model_slug") or item.get("default_model_slug") or "")
            if role == "assistant"
            else "",
            source="chatgpt",
            notes=notes,
        )
        message["_keep"] = role is not None and not hidden and bool(text.strip())
        messages.append(message)
    ordered = _as_tree(messages, keep=lambda m: m.pop("_keep"))
    return {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {
            "title": _label(item.get("title"), TITLE_MAX_CHARS),
            "created_at": _time(item.get("create_time")),
            "current_message_id": _nearest_kept(item.get("current_node"), ordered, by_parent),
        },
        "messages": ordered,
    }


# --- Claude ----------------------------------------------------------------------------


def _claude_text(raw: dict[str, Any]) -> tuple[str, list[str]]:
    notes: list[str] = []
    blocks = raw.get("content")
    if isinstance(blocks, list) and blocks:
        texts = []
        for block in blocks:
            if block.get("type") == "text":
                texts.append(block.get("text") or "")
            else:
                notes.append(f"dropped a {block.get('type', 'non-text')} block")
        text = "\n\n".join(t for t in texts if t)
    else:
        text = raw.get("text") or ""
    for attachment in (raw.get("attachments") or []) + (raw.get("files") or []):
        name = attachment.get("file_name") or attachment.get("name") or "file"
        text += f"\n\n[attachment: {name}]"
        notes.append(f"attachment {name} kept as its name only")
    return text, notes


def _read_claude(item: dict[str, Any]) -> dict[str, Any]:
    messages = []
    previous = None
    root = "00000000-0000-4000-8000-000000000000"  # Claude's parent of a first message
    for raw in item["chat_messages"]:
        text, notes = _claude_text(raw)
        # Newer exports carry the tree (parent_message_uuid); older ones are one line.
        parent = raw.get("parent_message_uuid", previous)
        message = _message(
            id=raw["uuid"],
            parent_id=None if parent in (None, root) else parent,
            role="user" if raw.get("sender") == "human" else "assistant",
            content=text,
            created_at=raw.get("created_at"),
            source="claude",
            notes=notes,
        )
        messages.append(message)
        previous = raw["uuid"]
    ordered = _as_tree(messages)
    leaf = item.get("current_leaf_message_uuid")
    leaf = str(leaf) if leaf and any(m["id"] == str(leaf) for m in ordered) else None
    return {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {
            "title": _label(item.get("name"), TITLE_MAX_CHARS),
            "description": _label(item.get("summary"), 2000),
            "created_at": item.get("created_at"),
            "current_message_id": str(leaf)
            if leaf and any(m["id"] == str(leaf) for m in ordered)
            else None,
        },
        "messages": ordered,
    }


# --- Open WebUI ------------------------------------------------------------------------


def _read_openwebui(item: dict[str, Any]) -> dict[str, Any]:
    chat = item["chat"]
    history = chat.get("history") or {}
    raw_messages = history.get("messages")
    if isinstance(raw_messages, dict) and raw_messages:
        found = list(raw_messages.values())
        current = history.get("currentId")
    else:  # only the linear list
        found, current = [], None
        previous = None
        for raw in chat.get("messages") or []:
            found.append(raw | {"parentId": raw.get("parentId", previous)})
            previous = raw.get("id")
    messages = []
    for raw in found:
        role = raw.get("role")
        notes = [f"dropped {len(raw['files'])} file(s)"] if raw.get("files") else []
        message = _message(
            id=raw["id"],
            parent_id=raw.get("parentId"),
            role=role if role in ("user", "assistant", "system") else "system",
            content=raw.get("content") or "",
            created_at=_time(raw.get("timestamp")),
            model=raw.get("model") or "",
            source="openwebui",
            notes=notes,
        )
        message["_keep"] = role in ("user", "assistant", "system")
        messages.append(message)
    ordered = _as_tree(messages, keep=lambda m: m.pop("_keep"))
    by_parent = {str(m.get("id")): m.get("parentId") for m in found}
    return {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {
            "title": _label(item.get("title") or chat.get("title"), TITLE_MAX_CHARS),
            "created_at": _time(item.get("created_at") or chat.get("timestamp")),
            "current_message_id": _nearest_kept(current, ordered, by_parent),
        },
        "messages": ordered,
    }


# --- LibreChat -------------------------------------------------------------------------

LIBRECHAT_ROOT = "00000000-0000-0000-0000-000000000000"


def _librechat_messages(raw_messages: list[Any]) -> Iterator[dict[str, Any]]:
    """Every message of a LibreChat export, nested (`recursive`) or flat."""
    stack = list(reversed(raw_messages))
    while stack:
        raw = stack.pop()
        yield raw
        stack.extend(reversed(raw.get("children") or []))


def _librechat_text(raw: dict[str, Any]) -> tuple[str, list[str]]:
    text = raw.get("text") or ""
    notes: list[str] = []
    if not text and isinstance(raw.get("content"), list):
        parts = []
        for block in raw["content"]:
            if block.get("type") == "text":
                value = block.get("text")
                parts.append(value.get("value", "") if isinstance(value, dict) else value or "")
            else:
                notes.append(f"dropped a {block.get('type', 'non-text')} block")
        text = "\n\n".join(p for p in parts if p)
    if raw.get("files"):
        notes.append(f"dropped {len(raw['files'])} file(s)")
    return text, notes


def _read_librechat(item: dict[str, Any]) -> dict[str, Any]:
    messages = []
    for raw in _librechat_messages(item["messages"]):
        parent = raw.get("parentMessageId")
        text, notes = _librechat_text(raw)
        messages.append(
            _message(
                id=raw["messageId"],
                parent_id=None if parent in (None, LIBRECHAT_ROOT) else parent,
                role="user" if raw.get("isCreatedByUser") else "assistant",
                content=text,
                created_at=raw.get("createdAt"),
                model="" if raw.get("isCreatedByUser") else raw.get("model") or raw.get("sender"),
                source="librechat",
                notes=notes,
            )
        )
    ordered = _as_tree(messages)
    return {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": {
            "title": _label(item.get("title"), TITLE_MAX_CHARS),
            "created_at": item.get("createdAt") or (ordered[0]["created_at"] if ordered else None),
            "current_message_id": None,  # the newest leaf, as LibreChat shows it
        },
        "messages": ordered,
    }


READERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "chatgpt": _read_chatgpt,
    "claude": _read_claude,
    "openwebui": _read_openwebui,
    "librechat": _read_librechat,
}
