"""LibreChat's conversation export (the JSON of *Export* in a conversation's menu).

`{conversationId, endpoint, title, exportAt, branches, recursive, options?, messages}` —
`messagesTree` in place of `messages` is read too (LibreChat's own importer accepts both).
With `recursive` the messages nest under `children` (the nesting is the tree); without, they
are a flat list linked by `parentMessageId`. `options` (exported with *Include options*)
holds the conversation's settings: `model`, `promptPrefix` (its instructions: our system
prompt) and `temperature` are kept.

A message is `{messageId, parentMessageId, sender, text, isCreatedByUser, model, …}`; agent
replies hold `content` parts instead of `text`: `text` (a string or `{value}`), `think`
(reasoning: a `thinking` part), `tool_call` (in three shapes: LibreChat's, a function call,
a code interpreter run; call and output become `tool_call` / `tool_result` parts), images
(noted), `error`. `unfinished` or `finish_reason: "incomplete"` marks a reply cut short;
`error: true` one that failed. The export names no leaf: the newest is shown, as LibreChat
does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import common
from .common import Node

NAME = "librechat"
ROOT = "00000000-0000-0000-0000-000000000000"
SILENT = ("agent_update", "text_delta")  # bookkeeping of a run, never words


def matches(item: dict[str, Any]) -> bool:
    return "conversationId" in item and ("messages" in item or "messagesTree" in item)


def title(item: dict[str, Any]) -> str:
    return common.label(item.get("title"))


def read(item: dict[str, Any]) -> dict[str, Any]:
    found = item.get("messagesTree")
    if found is None:
        found = item.get("messages")
    if not isinstance(found, list):
        raise ValueError("messages is not a list")
    nodes = [_node(raw, parent) for raw, parent in _walk(found)]
    messages, _ = common.build(nodes, source=NAME)
    settings, notes = _settings(item.get("options"))
    return common.conversation(
        title=item.get("title"),
        created_at=item.get("createdAt") or (messages[0]["created_at"] if messages else None),
        messages=messages,
        current=common.newest_leaf(messages),  # LibreChat opens on the latest message
        notes=notes,
        **settings,
    )


def _settings(options: Any) -> tuple[dict[str, Any], list[str]]:
    """The conversation's model, instructions and temperature from `options`."""
    if not isinstance(options, dict):
        return {}, []
    return common.settings(
        model=options.get("model"),
        system_prompt=options.get("promptPrefix") or options.get("instructions"),
        temperature=options.get("temperature"),
    )


def _walk(messages: list[Any]) -> Iterator[tuple[dict[str, Any], Any]]:
    """Every message with its parent: the message it nests under, or its own
    `parentMessageId` (a flat export)."""
    stack = [(raw, None) for raw in reversed(messages)]
    while stack:
        raw, nested_under = stack.pop()
        parent = nested_under if nested_under is not None else raw.get("parentMessageId")
        yield raw, parent
        children = raw.get("children") or []
        stack.extend((child, raw["messageId"]) for child in reversed(children))


def _node(raw: dict[str, Any], parent: Any) -> Node:
    mine = bool(raw.get("isCreatedByUser"))
    text, parts, notes = _content(raw)
    finish = None
    if not mine:
        if raw.get("error"):
            finish = "error"
        elif raw.get("unfinished") or raw.get("finish_reason") == "incomplete":
            finish = "interrupted"
        elif raw.get("finish_reason") == "length":
            finish = "max_tokens"
    return Node(
        id=str(raw["messageId"]),
        parent_id=None if parent in (None, ROOT) else str(parent),
        role="user" if mine else "assistant",
        content=text,
        parts=[] if mine else parts,
        created_at=raw.get("createdAt"),
        model="" if mine else raw.get("model") or raw.get("sender") or "",
        finish_reason=finish,
        notes=notes,
    )


def _content(raw: dict[str, Any]) -> tuple[str, list[dict[str, Any]], list[str]]:
    """A message's text, its steps, and what could not be kept."""
    text = common.text_of(raw.get("text"))
    notes: list[str] = []
    parts: list[dict[str, Any]] = []
    blocks = raw.get("content")
    if isinstance(blocks, list):
        texts = []
        for block in blocks:
            if not isinstance(block, dict):
                raise ValueError("a content part is not an object")
            if common.took_text_or_reasoning(block, thought="think", texts=texts, parts=parts):
                continue
            kind = block.get("type")
            if kind == "tool_call":
                parts.extend(_tool_call(block.get("tool_call") or {}))
            elif kind == "error":
                said = block.get("error") or common.text_of(block.get("text"))
                notes.append(f"the reply ended with an error: {str(said)[:300]}")
            elif kind not in SILENT:
                notes.append(f"dropped a {kind or 'untyped'} part")
        # The parts hold the whole reply; `text` is then a copy (or empty).
        text = "\n\n".join(t for t in texts if t) or text
    if raw.get("files"):
        notes.append(f"dropped {len(raw['files'])} file(s)")
    return text, parts, notes


def _tool_call(call: dict[str, Any]) -> list[dict[str, Any]]:
    """A call and its output, whichever of LibreChat's shapes it has."""
    call_id = call.get("id")
    if isinstance(call.get("function"), dict):
        function = call["function"]
        name, args, output = function.get("name"), function.get("arguments"), function.get("output")
    elif isinstance(call.get("code_interpreter"), dict):
        run = call["code_interpreter"]
        name, args, output = "code_interpreter", {"code": run.get("input")}, run.get("outputs")
    else:
        name, args, output = call.get("name"), call.get("args"), call.get("output")
    parts = [common.tool_call(call_id, name or call.get("type"), args)]
    if output not in (None, "", []):
        parts.append(common.tool_result(call_id, name or call.get("type"), output))
    return parts
