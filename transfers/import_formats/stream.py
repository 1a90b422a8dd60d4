"""Read an import file one conversation at a time, in bounded memory.

A ChatGPT export of every conversation a user ever had is one JSON array (or a zip holding
it), so the file is parsed as a stream (ijson) and each conversation is built alone. A
conversation larger than the per-conversation limit is not built: it is passed over (its
events are read and forgotten) and reported as `Oversized`, so the rest of the file still
imports. A file that stops being JSON ends the reading where it breaks: what came before
is kept, and `Broken` says where.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import ijson
from django.utils.translation import gettext as _
from ijson.common import ObjectBuilder

from core import schemas
from core.errors import TooLarge

from .errors import InvalidImport

ZIP_MAGIC = b"PK\x03\x04"
# A LibreChat recursive export nests two levels per message: a linear chat of 10,000
# messages is 20,000 deep. Readers walk trees with a stack, and stored JSON (parts,
# metadata) is held to 32 levels, so the depth is bounded only to refuse nonsense.
MAX_DEPTH = 20_000
DEPTH_CHANGE = {"start_map": 1, "start_array": 1, "end_map": -1, "end_array": -1}
# How far the parser reads ahead of the value it is on (ijson reads 64 KiB at a time).
READ_AHEAD = 2 * 65536


@dataclass(frozen=True)
class Oversized:
    """A conversation of the file larger than the per-conversation limit (not built)."""

    limit: int


@dataclass(frozen=True)
class Whole:
    """The one conversation of a file that is a single JSON object."""

    value: Any


@dataclass(frozen=True)
class Broken:
    """The point where the file stops being readable JSON."""

    reason: str


class BoundedReader(io.RawIOBase):
    """A binary stream that refuses to read past `total` bytes (the file), or more than
    `per_value` bytes without the parser finishing a value (one string that alone is
    larger than a conversation may be: the parser would hold it whole)."""

    def __init__(self, raw: IO[bytes], *, total: int, per_value: int) -> None:
        self.raw, self.total, self.per_value = raw, total, per_value + READ_AHEAD
        self.read_bytes = 0
        self.since_value = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(65536 if size is None or size < 0 else size)
        self.read_bytes += len(data)
        self.since_value += len(data)
        if self.read_bytes > self.total:
            raise TooLarge(_("The file is larger than %(limit)s bytes.") % {"limit": self.total})
        if self.since_value > self.per_value:
            limit = self.per_value - READ_AHEAD
            raise TooLarge(
                _("A single value in the file is larger than %(limit)s bytes.") % {"limit": limit}
            )
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


Item = Any | Whole | Oversized | Broken


def read_items(source: IO[bytes], *, max_bytes: int, max_item_bytes: int) -> Iterator[Item]:
    """Yield each conversation of the file as parsed JSON: the one object of a file that
    is one (as `Whole`), or each item of a file that is an array (an `Oversized` in place
    of an item over `max_item_bytes`, and a `Broken` where the file breaks off)."""
    head = source.read(4)
    source.seek(0)
    if head == ZIP_MAGIC:
        yield from _read_zip(source, max_bytes=max_bytes, max_item_bytes=max_item_bytes)
        return
    yield from _read_json(
        BoundedReader(source, total=max_bytes, per_value=max_item_bytes), max_item_bytes
    )


def _read_zip(source: IO[bytes], *, max_bytes: int, max_item_bytes: int) -> Iterator[Item]:
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
        stream = BoundedReader(member, total=max_bytes, per_value=max_item_bytes)
        yield from _read_json(stream, max_item_bytes)


def _read_json(stream: BoundedReader, max_item_bytes: int) -> Iterator[Item]:
    first = _first_char(stream)
    if first == "{":
        # One conversation (≤ CHAT_IMPORT_MAX_BYTES): the strict parser, which refuses
        # what yajl would quietly change (a lone surrogate escape becomes "?" there).
        chunks, size = [], 0
        while chunk := stream.read(64 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            stream.since_value = 0
            if size > max_item_bytes:
                raise TooLarge(
                    _("The conversation is larger than %(limit)s bytes.")
                    % {"limit": max_item_bytes}
                )
        raw = b"".join(chunks)
        try:
            whole = Whole(schemas.loads(raw))
        except schemas.TooDeep:
            whole = Whole(_built_without_recursion(raw))  # a long chat's recursive tree
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidImport(f"file: not valid JSON: {exc}"[:300]) from None
        yield whole
        return
    if first != "[":
        raise InvalidImport("file: expected a JSON object or array.")
    yield from _array_items(stream, max_item_bytes)


def _array_items(stream: BoundedReader, max_item_bytes: int) -> Iterator[Item]:
    """Yield each item of the top-level array, built one at a time. Nesting deeper than
    MAX_DEPTH is refused before it is built (ijson's own prefixes grow with the square of
    the depth); an item whose text passes `max_item_bytes` is read past, not built. (The
    loop runs once per JSON token of the file: kept to a few operations each.)"""
    level = 0
    add = None  # the builder's `event` while an item is being built
    builder = ObjectBuilder()
    size = 0
    skipping = False
    try:
        for event, value in ijson.basic_parse(stream, use_float=True):
            stream.since_value = 0
            change = DEPTH_CHANGE.get(event)
            if change:
                level += change
                if level > MAX_DEPTH:
                    raise InvalidImport(f"file: JSON nested deeper than {MAX_DEPTH} levels.")
                if level == 2 and change == 1:
                    builder = ObjectBuilder()
                    add, size, skipping = builder.event, 0, False
            if add is not None:
                if value.__class__ is str:
                    size += len(value)
                    if size > max_item_bytes:
                        add, skipping = None, True
                        continue
                add(event, value)
                if level == 1:
                    yield builder.value
                    add = None
            elif level == 1 and change != 1:
                if skipping:
                    if change == -1:
                        yield Oversized(max_item_bytes)
                        skipping = False
                elif not change:
                    yield value  # a scalar where a conversation goes (not one)
    except (ijson.JSONError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        yield Broken(f"not valid JSON from here on: {exc}"[:300])


def _built_without_recursion(raw: bytes) -> Any:
    """Build a JSON value too deep for Python's parser (it recurses per level) with ijson's
    builder, which keeps a stack instead; refuse deeper than MAX_DEPTH, and what the strict
    parser would (NaN, Infinity, numbers out of range)."""
    builder = ObjectBuilder()
    level = 0
    try:
        for event, value in ijson.basic_parse(io.BytesIO(raw), use_float=True):
            level += DEPTH_CHANGE.get(event, 0)
            if level > MAX_DEPTH:
                raise InvalidImport(f"file: JSON nested deeper than {MAX_DEPTH} levels.")
            if value.__class__ is float and not math.isfinite(value):
                raise InvalidImport("file: not valid JSON: a number is out of range")
            builder.event(event, value)
    except (ijson.JSONError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidImport(f"file: not valid JSON: {exc}"[:300]) from None
    return builder.value


def _first_char(stream: BoundedReader) -> str:
    """Return the first character of the JSON text (after a BOM and whitespace), and
    rewind the stream."""
    start = stream.raw.read(4096)
    stream.raw.seek(0)
    text = start.lstrip(b"\xef\xbb\xbf \t\r\n")
    return chr(text[0]) if text else ""
