"""Read conversations exported by other apps, one at a time, as this app's export shape.

`read_conversations(file)` detects each conversation of the file from its content — this
app's export, ChatGPT's data export (`conversations.json` or its zip), Claude's
`conversations.json`, Open WebUI's chat export, LibreChat's conversation export — and yields
an `Entry` for each: the conversation in the shape `export_format.ExportFile` validates (the one
validation layer), with `messages[].id/parent_id` keeping the other app's tree and
`current_message_id` its leaf; or, for one it cannot read, why.

Each format has its own reader module (`chatgpt`, `claude`, `openwebui`, `librechat`), written
from the app's export format as it is documented and observed (the fixtures in
tests/conversations/import_fixtures/ are exports we wrote in those shapes); `common` holds
what they share (the tree, what is dropped and how it is noted), `stream` the bounded,
one-conversation-at-a-time reading of the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import IO, Any

from . import chatgpt, claude, librechat, openwebui
from .errors import InvalidImport
from .stream import Broken, Oversized, Whole, read_items

__all__ = ["FORMATS", "OURS", "Entry", "InvalidImport", "read_conversations"]

OURS = "chatsite"
READERS: tuple[ModuleType, ...] = (chatgpt, claude, openwebui, librechat)
FORMATS = (OURS, *(reader.NAME for reader in READERS))


@dataclass(frozen=True)
class Entry:
    """One conversation of a file: read (`data`), or not (`reason`)."""

    index: int
    where: str  # "file" for a file of one conversation, else "conversations[i]"
    format: str
    title: str
    data: dict[str, Any] | None
    reason: str = ""


def read_conversations(
    source: IO[bytes], *, max_bytes: int, max_conversation_bytes: int
) -> Iterator[Entry]:
    """Yield an `Entry` for every conversation of the file, in order; stop at the point
    where the file stops being JSON (an entry says so)."""
    items = read_items(source, max_bytes=max_bytes, max_item_bytes=max_conversation_bytes)
    for index, item in enumerate(items):
        if isinstance(item, Whole):
            yield _entry(index, "file", item.value)
        elif isinstance(item, Broken):
            yield Entry(index, "file", "", "", None, item.reason)
            return
        elif isinstance(item, Oversized):
            reason = f"larger than {item.limit} bytes"
            yield Entry(index, f"conversations[{index}]", "", "", None, reason)
        else:
            yield _entry(index, f"conversations[{index}]", item)


def _entry(index: int, where: str, item: Any) -> Entry:
    try:
        reader = detect(item)
    except InvalidImport as exc:
        return Entry(index, where, "", "", None, exc.message)
    if reader is None:
        return Entry(index, where, OURS, _our_title(item), item)
    title = _safe_title(reader, item)
    try:
        return Entry(index, where, reader.NAME, title, reader.read(item))
    except InvalidImport as exc:
        return Entry(index, where, reader.NAME, title, None, exc.message)
    except (TypeError, AttributeError, KeyError, ValueError, OverflowError, RecursionError) as exc:
        reason = f"not a well-formed {reader.NAME} conversation ({type(exc).__name__}: {exc})"
        return Entry(index, where, reader.NAME, title, None, reason[:300])


def detect(item: Any) -> ModuleType | None:
    """Return the reader of the app that wrote this conversation (None: this app's own)."""
    if not isinstance(item, dict):
        raise InvalidImport("expected a conversation object.")
    if item.get("format") == "chatsite.conversation":
        return None
    for reader in READERS:
        if reader.matches(item):
            return reader
    raise InvalidImport(
        "not a conversation this app can read (this app's export, ChatGPT, Claude, "
        "Open WebUI or LibreChat)."
    )


def _safe_title(reader: ModuleType, item: dict[str, Any]) -> str:
    try:
        return reader.title(item)
    except (TypeError, AttributeError, ValueError):
        return ""


def _our_title(item: dict[str, Any]) -> str:
    header = item.get("conversation")
    name = header.get("title") if isinstance(header, dict) else None
    return " ".join(name.split())[:200] if isinstance(name, str) else ""
