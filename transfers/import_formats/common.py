"""What every reader shares: the message a reader makes of another app's, and the tree.

A reader turns each entry of another app's conversation into a `Node`: a message kept
(`role` set) or not (a tool's turn, a reasoning block stored on its own, a hidden system
turn). `build` then makes this app's export shape of them:

- a message not kept hands its `parts` (reasoning, tool calls and results) to the next
  reply below it, so a reply keeps the steps that led to it on every branch;
- what is dropped for good is noted on the message that held it, or on the message it
  came before (a dropped first message is noted on what then opens the conversation), or,
  when nothing comes after it, on the message it followed;
- children hang from their nearest kept ancestor, numbered oldest first among the ready.
"""

from __future__ import annotations

import heapq
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from conversations.steps import REASONING, THINKING_PART
from core.schemas import INSTRUCTIONS_MAX_CHARS

MODEL_MAX_CHARS = 100
TITLE_MAX_CHARS = 200
# What one message may carry (export_format.ExportedMessage holds the same bound).
MAX_PARTS = 200


@dataclass(slots=True)
class Node:
    """One entry of another app's conversation, as a reader understood it."""

    id: str
    parent_id: str | None
    role: str | None  # "user" | "assistant" | "system"; None: not kept as a message
    content: str = ""
    parts: list[dict[str, Any]] = field(default_factory=list)
    created_at: Any = None
    model: str = ""
    finish_reason: str | None = None
    notes: list[str] = field(default_factory=list)
    dropped: str = ""  # not kept: what it was, for the note ("" when it held nothing)


def time(value: Any) -> Any:
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


def label(value: Any, limit: int = TITLE_MAX_CHARS) -> str:
    """A short label (title, model name): text, whitespace folded, cut to `limit`."""
    return " ".join(value.split())[:limit] if isinstance(value, str) else ""


def text_of(value: Any) -> str:
    """A text field some apps write as a string and some as `{"value": …}`."""
    if isinstance(value, dict):
        value = value.get("value")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError("a text field is neither text nor {value: text}")
    return value


def reasoning(text: str, *, seconds: Any = None) -> dict[str, Any]:
    """A `thinking` part holding a model's reasoning (shown folded above the reply)."""
    part: dict[str, Any] = {"type": THINKING_PART, "step": REASONING, "content": text.strip()}
    number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
    if number and math.isfinite(seconds) and 0 <= seconds < 10**7:
        part["seconds"] = round(seconds)
    return part


def reasoning_of(value: Any) -> list[dict[str, Any]]:
    """A thought's reasoning part, or none when the thought is empty."""
    thought = text_of(value)
    return [reasoning(thought)] if thought.strip() else []


def took_text_or_reasoning(
    block: dict[str, Any], *, thought: str, texts: list[str], parts: list[dict[str, Any]]
) -> bool:
    """Take a `text` block's text into `texts`, or a `thought` block's reasoning (its
    `thought` field) into `parts`; say whether the block was one of the two."""
    kind = block.get("type")
    if kind == "text":
        texts.append(text_of(block.get("text")))
    elif kind == thought:
        parts.extend(reasoning_of(block.get(thought)))
    else:
        return False
    return True


def tool_call(call_id: Any, name: Any, args: Any) -> dict[str, Any]:
    """A `tool_call` part: the tool's name and what it was given (an object, or the text;
    text that encodes a JSON object, as most apps store arguments, is that object)."""
    if isinstance(args, str):
        try:
            decoded = json.loads(args)
        except ValueError:
            decoded = None
        args = decoded if isinstance(decoded, dict) else args
    return {"type": "tool_call", "id": str(call_id or ""), "name": label(name, 100), "args": args}


def tool_result(call_id: Any, name: Any, output: Any, *, is_error: bool = False) -> dict[str, Any]:
    """A `tool_result` part: what the tool answered, as text."""
    part = {
        "type": "tool_result",
        "id": str(call_id or ""),
        "name": label(name, 100),
        "content": output if isinstance(output, str) else _as_text(output),
    }
    if is_error:
        part["is_error"] = True
    return part


def _as_text(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _what(part: dict[str, Any]) -> str:
    name = part.get("name") or "a tool"
    if part["type"] == "tool_call":
        return f"a call to {name}"
    if part["type"] == "tool_result":
        return f"the result of {name}"
    return REASONING


def build(
    nodes: list[Node], *, source: str, leaf: Any = None
) -> tuple[list[dict[str, Any]], str | None]:
    """Return the kept messages in export shape (numbered, each after its parent) and the
    id of the current one: `leaf`, or its nearest kept ancestor."""
    by_id: dict[str, Node] = {}
    for node in nodes:
        if node.id in by_id:
            raise ValueError(f"two messages have the id {node.id[:40]!r}")
        by_id[node.id] = node
    original_parent = {node.id: node.parent_id for node in nodes}
    children: dict[str | None, list[Node]] = {}
    for node in nodes:
        parent = node.parent_id if node.parent_id in by_id else None
        children.setdefault(parent, []).append(node)

    kept: list[Node] = []
    # (node, nearest kept ancestor, parts carried down to the next reply, notes carried)
    stack: list[tuple[Node, str | None, tuple[dict[str, Any], ...], tuple[str, ...]]] = [
        (node, None, (), ()) for node in reversed(children.get(None, []))
    ]
    reached = 0
    while stack:
        node, above, parts, notes = stack.pop()
        reached += 1
        if node.role is not None:
            node.parent_id = above
            if parts and node.role == "assistant":
                node.parts = [*parts, *node.parts]
            elif parts:
                notes = (*notes, "dropped " + ", ".join(_what(p) for p in parts))
            node.notes = [*notes, *node.notes]
            kept.append(node)
            above, parts, notes = node.id, (), ()
        else:
            parts = (*parts, *node.parts)
            notes = (*notes, node.dropped) if node.dropped else notes
            if node.id not in children and above is not None and (parts or notes):
                lost = [*notes, *(f"dropped {_what(p)}" for p in parts)]
                by_id[above].notes.append("after this message: " + "; ".join(lost))
        for child in reversed(children.get(node.id, [])):
            stack.append((child, above, parts, notes))
    if reached != len(nodes):
        raise ValueError("the messages' parents form a loop")
    ordered = _numbered(kept, children_of={n.id: [] for n in kept})
    current = _nearest_kept(leaf, by_id, original_parent)
    return [_export_shape(node, source) for node in ordered], current


def newest_leaf(messages: list[dict[str, Any]]) -> str | None:
    """The id of the leaf written last (for a file that names no current message: the
    branch its app would open on)."""
    parents = {m["parent_id"] for m in messages}
    leaves = [m for m in messages if m["id"] not in parents]
    if not leaves:
        return None
    return max(leaves, key=lambda m: (_sort_key_of(m.get("created_at")), m["id"]))["id"]


def _sort_key_of(created: Any) -> str:
    return created if isinstance(created, str) else ""


def _numbered(kept: list[Node], *, children_of: dict[str, list[Node]]) -> list[Node]:
    """Kept nodes in an order where each comes after its parent, oldest first among the
    ready ones (the file's sequence numbers)."""
    roots = []
    for node in kept:
        if node.parent_id is None:
            roots.append(node)
        else:
            children_of[node.parent_id].append(node)
    ready = [(_sort_key(n), i, n) for i, n in enumerate(roots)]
    heapq.heapify(ready)
    counter = len(ready)
    ordered: list[Node] = []
    while ready:
        _, _, node = heapq.heappop(ready)
        ordered.append(node)
        for child in children_of[node.id]:
            counter += 1
            heapq.heappush(ready, (_sort_key(child), counter, child))
    return ordered


def _sort_key(node: Node) -> str:
    return _sort_key_of(node.created_at)


def _nearest_kept(
    leaf: Any, by_id: dict[str, Node], original_parent: dict[str, str | None]
) -> str | None:
    """Return `leaf`, or its nearest ancestor that was kept (None when none was)."""
    hops = 0
    current = None if leaf is None else str(leaf)
    while current is not None and hops <= len(by_id):
        node = by_id.get(current)
        if node is None:
            return None
        if node.role is not None:
            return current
        current = original_parent.get(current)
        hops += 1
    return None


def _export_shape(node: Node, source: str) -> dict[str, Any]:
    parts, notes = node.parts, node.notes
    if len(parts) > MAX_PARTS:
        notes = [*notes, f"dropped {len(parts) - MAX_PARTS} steps past the first {MAX_PARTS}"]
        parts = parts[:MAX_PARTS]
    note: dict[str, Any] = {"from": source, "id": node.id}
    if notes:
        note["notes"] = notes
    message: dict[str, Any] = {
        "id": node.id,
        "parent_id": node.parent_id,
        "role": node.role,
        "content": node.content,
        "parts": parts,
        "created_at": node.created_at,
        "model": label(node.model, MODEL_MAX_CHARS),
        "metadata": {"import": note},
    }
    if node.finish_reason:
        message["finish_reason"] = node.finish_reason
    return message


def settings(
    *, model: Any = None, system_prompt: Any = None, temperature: Any = None
) -> tuple[dict[str, Any], list[str]]:
    """A conversation's settings as this app holds them, and notes for what could not be
    kept as it was (a setting out of range never costs the conversation)."""
    notes = []
    instructions = system_prompt if isinstance(system_prompt, str) else ""
    if len(instructions) > INSTRUCTIONS_MAX_CHARS:
        notes.append(f"the instructions were cut to {INSTRUCTIONS_MAX_CHARS} characters")
        instructions = instructions[:INSTRUCTIONS_MAX_CHARS]
    if temperature is not None:
        number = isinstance(temperature, int | float) and not isinstance(temperature, bool)
        if number and math.isfinite(temperature) and 0 <= temperature <= 2:
            temperature = float(temperature)
        else:
            notes.append(f"the temperature {str(temperature)[:20]} was not kept (0 to 2)")
            temperature = None
    kept = {"model": label(model, MODEL_MAX_CHARS), "system_prompt": instructions}
    return kept | {"temperature": temperature}, notes


def conversation(
    *,
    title: Any,
    created_at: Any,
    messages: list[dict[str, Any]],
    current: str | None,
    notes: list[str] | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """One conversation in this app's export shape (what `export_format.ExportFile` validates);
    `notes` about the conversation as a whole go on its first message."""
    for number, message in enumerate(messages, start=1):
        message["sequence_number"] = number
    if notes and messages:
        messages[0]["metadata"]["import"].setdefault("notes", []).extend(notes)
    header = {"title": label(title), "created_at": created_at, "current_message_id": current}
    header.update({key: value for key, value in settings.items() if value not in (None, "")})
    return {
        "format": "chatsite.conversation",
        "version": 1,
        "conversation": header,
        "messages": messages,
    }
