"""Claude's data export (`conversations.json`): a list of conversations with `chat_messages`.

A message is `sender` human/assistant with `text`, and in newer exports `content` blocks:
text; `thinking` (a reasoning model's thoughts: a `thinking` part); `tool_use` and
`tool_result` (`tool_call` / `tool_result` parts). Attachments keep their name in the text
(their extracted content is not imported); files are noted. Newer exports carry the tree
(`parent_message_uuid`) and the leaf (`current_leaf_message_uuid`); older ones are one
line. The export marks no reply as cut short.
"""

from __future__ import annotations

from typing import Any

from . import common
from .common import Node

NAME = "claude"
ROOT = "00000000-0000-4000-8000-000000000000"  # Claude's parent of a first message


def matches(item: dict[str, Any]) -> bool:
    return "chat_messages" in item


def title(item: dict[str, Any]) -> str:
    return common.label(item.get("name"))


def read(item: dict[str, Any]) -> dict[str, Any]:
    nodes = []
    previous = None
    for raw in item["chat_messages"]:
        text, parts, notes = _content(raw)
        parent = raw.get("parent_message_uuid", previous)
        assistant = raw.get("sender") != "human"
        nodes.append(
            Node(
                id=str(raw["uuid"]),
                parent_id=None if parent in (None, ROOT) else str(parent),
                role="assistant" if assistant else "user",
                content=text,
                parts=parts if assistant else [],
                created_at=raw.get("created_at"),
                notes=notes,
            )
        )
        previous = raw["uuid"]
    leaf = item.get("current_leaf_message_uuid")
    messages, current = common.build(nodes, source=NAME, leaf=leaf)
    return common.conversation(
        title=item.get("name"),
        description=common.label(item.get("summary"), 2000),
        created_at=item.get("created_at"),
        messages=messages,
        current=current,
    )


def _content(raw: dict[str, Any]) -> tuple[str, list[dict[str, Any]], list[str]]:
    """A message's text, its steps (reasoning, tool calls and results), and notes."""
    notes: list[str] = []
    parts: list[dict[str, Any]] = []
    blocks = raw.get("content")
    if isinstance(blocks, list) and blocks:
        texts = []
        for block in blocks:
            if common.took_text_or_reasoning(block, thought="thinking", texts=texts, parts=parts):
                continue
            kind = block.get("type")
            if kind == "tool_use":
                call = common.tool_call(block.get("id"), block.get("name"), block.get("input"))
                parts.append(call)
            elif kind == "tool_result":
                output = block.get("content")
                if isinstance(output, list):
                    output = "\n\n".join(
                        common.text_of(b.get("text")) for b in output if isinstance(b, dict)
                    )
                parts.append(
                    common.tool_result(
                        block.get("tool_use_id"),
                        block.get("name"),
                        output,
                        is_error=bool(block.get("is_error")),
                    )
                )
            else:
                notes.append(f"dropped a {kind or 'non-text'} block")
        text = "\n\n".join(t for t in texts if t)
    else:
        text = common.text_of(raw.get("text"))
    for attachment in (raw.get("attachments") or []) + (raw.get("files") or []):
        name = attachment.get("file_name") or attachment.get("name") or "file"
        text += f"\n\n[attachment: {name}]"
        notes.append(f"attachment {name} kept as its name only")
    if parts and raw.get("sender") == "human":
        notes.append(f"dropped {len(parts)} tool or reasoning block(s) of a person's message")
    return text, parts, notes
