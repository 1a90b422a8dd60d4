"""Open WebUI's chat export (`chat-export-<ms>.json`: a list of chats, or one chat).

A chat holds its tree in `chat.history.messages` (`{id: message}`, each with `parentId`)
and the message shown in `history.currentId`; older exports have only the linear
`chat.messages`. A reply's reasoning and tool calls come in one of the shapes Open WebUI
has written over its versions, all read here:

- `output` (0.8 on): Responses-like items — `message` (the text), `reasoning`,
  `function_call` / `function_call_output`, `open_webui:code_interpreter`, web and file
  search calls; the newest versions leave `content` empty and keep everything here;
- `<details type="reasoning|tool_calls|code_interpreter" …>` blocks in `content` (0.5–0.8),
  their attributes HTML-escaped JSON, the reasoning quoted with `> ` (and escaped, later);
- `<think>…</think>` at the start of `content` (raw model output of older versions).

Reasoning becomes a `thinking` part, calls and results `tool_call` / `tool_result` parts;
none of the markup stays in `content`. A reply not `done` is cut (`interrupted`); one with
an `error` failed (`error`). Files sent with a message are noted, not imported.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from . import common
from .common import Node

NAME = "openwebui"
# The opening tag of a block Open WebUI wrote (a plain <details> a model wrote is words).
DETAILS_HEAD = re.compile(r'<details\s+type="(?P<type>[\w:-]*)"(?P<attrs>[^>]*)>')
CLOSE = "</details>"
ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')
SUMMARY = re.compile(r"^\s*<summary>.*?</summary>\s*", re.S)
THINK = re.compile(r"^\s*<(think|thinking|reasoning)>(.*?)</\1>\s*", re.S)
FENCE = re.compile(r"^```[\w+-]*\n(.*?)\n?```\s*$", re.S)
ROLES = ("user", "assistant", "system")


def matches(item: dict[str, Any]) -> bool:
    chat = item.get("chat")
    return isinstance(chat, dict) and ("history" in chat or "messages" in chat)


def title(item: dict[str, Any]) -> str:
    chat = item.get("chat")
    return common.label(item.get("title") or (chat.get("title") if isinstance(chat, dict) else ""))


def read(item: dict[str, Any]) -> dict[str, Any]:
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
    nodes = [_node(raw) for raw in found]
    messages, current_id = common.build(nodes, source=NAME, leaf=current)
    params = chat.get("params") if isinstance(chat.get("params"), dict) else {}
    models = chat.get("models") if isinstance(chat.get("models"), list) else []
    settings, notes = common.settings(
        model=models[0] if len(models) == 1 else None,  # an arena of several: none
        system_prompt=chat.get("system") or params.get("system"),
        temperature=params.get("temperature"),
    )
    return common.conversation(
        title=item.get("title") or chat.get("title"),
        created_at=common.time(item.get("created_at") or chat.get("timestamp")),
        messages=messages,
        current=current_id,
        notes=notes,
        **settings,
    )


def _node(raw: dict[str, Any]) -> Node:
    role = raw.get("role")
    parent = raw.get("parentId")
    notes = [f"dropped {len(raw['files'])} file(s)"] if raw.get("files") else []
    content = raw.get("content")
    text = "\n\n".join(_texts(content)) if isinstance(content, list) else common.text_of(content)
    parts: list[dict[str, Any]] = []
    finish = None
    if role == "assistant":
        text, parts, more = _reply(text, raw.get("output"))
        notes += more
        error = raw.get("error")
        if error:
            finish = "error"
            said = error.get("content") if isinstance(error, dict) else error
            notes.append(f"the reply ended with an error: {str(said)[:300]}")
        elif raw.get("done") is False:
            finish = "interrupted"
    return Node(
        id=str(raw["id"]),
        parent_id=None if parent is None else str(parent),
        role=role if role in ROLES else None,
        content=text,
        parts=parts,
        created_at=common.time(raw.get("timestamp")),
        model=(raw.get("model") or "") if role == "assistant" else "",
        finish_reason=finish,
        notes=notes,
        dropped="" if role in ROLES else f"dropped a {role or 'untyped'} message",
    )


def _reply(text: str, output: Any) -> tuple[str, list[dict[str, Any]], list[str]]:
    """A reply's words without markup, its steps, and notes: from `output` when the
    message has it (the structured record), else from the markup in its text."""
    text, parts, notes = _from_markup(text)
    if isinstance(output, list) and output:
        said, parts, notes = _from_output(output)
        text = text or said
    return text.strip(), parts, notes


def _from_markup(text: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    parts: list[dict[str, Any]] = []
    notes: list[str] = []
    think = THINK.match(text)
    if think:
        parts.append(common.reasoning(think.group(2)))
        text = text[think.end() :]

    kept: list[str] = []
    position = 0
    last_bracket = text.rfind(">")
    # One pass with find(): a regex over text with many unclosed tags would go quadratic.
    # Every head tried ends at a ">" (there is one after it), so each is read once.
    while (start := text.find("<details", position)) >= 0 and start < last_bracket:
        head = DETAILS_HEAD.match(text, start)
        if head is None:  # a <details> of the reply's own words
            kept.append(text[position : start + 1])
            position = start + 1
            continue
        close = text.find(CLOSE, head.end())
        if close < 0:  # no block closes after this one: the rest is words
            break
        kept.append(text[position:start])
        _take(head["type"], head["attrs"], text[head.end() : close], parts, notes)
        position = close + len(CLOSE)
        if text.startswith("\n", position):
            position += 1
    kept.append(text[position:])
    return "".join(kept), parts, notes


def _take(
    kind: str, raw_attrs: str, body: str, parts: list[dict[str, Any]], notes: list[str]
) -> None:
    """Turn one `<details type=…>` block into parts."""
    attrs = {k: html.unescape(v) for k, v in ATTRIBUTE.findall(raw_attrs)}
    body = SUMMARY.sub("", body, count=1)
    if kind == "reasoning":
        parts.append(common.reasoning(_unquote(body), seconds=_number(attrs.get("duration"))))
    elif kind == "tool_calls":
        parts.extend(_tool_calls(attrs))
    elif kind == "code_interpreter":
        code = FENCE.match(body.strip())
        call_id = attrs.get("id") or f"code-{len(parts)}"
        args = {"code": code.group(1) if code else body}
        parts.append(common.tool_call(call_id, "code_interpreter", args))
        if "output" in attrs:
            output = _json(attrs["output"])
            parts.append(common.tool_result(call_id, "code_interpreter", output))
    else:
        notes.append(f"dropped a {kind or 'untyped'} block")


def _unquote(body: str) -> str:
    """Reasoning as Open WebUI quoted it (`> ` on every line, escaped in later versions)."""
    if "&gt;" in body or "&lt;" in body or "&amp;" in body:
        body = html.unescape(body)
    lines = body.split("\n")
    return "\n".join(ln[2:] if ln.startswith("> ") else ln.removeprefix(">") for ln in lines)


def _tool_calls(attrs: dict[str, str]) -> list[dict[str, Any]]:
    """The parts of one `tool_calls` block: 0.6 on (`id`, `name`, `arguments`, `result`),
    or 0.5 (`content`: the calls, `results`: their answers)."""
    if "content" in attrs:  # 0.5: every call of the turn in one block
        calls = _json(attrs["content"])
        results = {
            str(r.get("tool_call_id")): r.get("content")
            for r in _json(attrs.get("results", "[]")) or []
            if isinstance(r, dict)
        }
        parts = []
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") or {}
            name = function.get("name")
            args = function.get("arguments")
            parts.append(common.tool_call(call.get("id"), name, args))
            if str(call.get("id")) in results:
                parts.append(common.tool_result(call.get("id"), name, results[str(call.get("id"))]))
        return parts
    call_id, name = attrs.get("id"), attrs.get("name")
    parts = [common.tool_call(call_id, name, _json(attrs.get("arguments", '""')))]
    if "result" in attrs:
        parts.append(common.tool_result(call_id, name, _json(attrs["result"])))
    return parts


def _from_output(output: list[Any]) -> tuple[str, list[dict[str, Any]], list[str]]:
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    notes: list[str] = []
    names: dict[str, Any] = {}
    for item in output:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            texts.extend(_texts(item.get("content")))
        elif kind == "reasoning":
            said = _texts(item.get("summary")) or _texts(item.get("content"))
            if said:
                parts.append(common.reasoning("\n\n".join(said), seconds=item.get("duration")))
        elif kind == "function_call":
            names[str(item.get("call_id"))] = item.get("name")
            args = item.get("arguments")
            parts.append(common.tool_call(item.get("call_id"), item.get("name"), args))
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            answer = item.get("output")
            answer = "\n\n".join(_texts(answer)) if isinstance(answer, list) else answer
            parts.append(common.tool_result(call_id, names.get(str(call_id)) or "tool", answer))
        elif kind == "open_webui:code_interpreter":
            call_id = item.get("id")
            parts.append(common.tool_call(call_id, "code_interpreter", {"code": item.get("code")}))
            if item.get("output") is not None:
                parts.append(common.tool_result(call_id, "code_interpreter", item.get("output")))
        elif kind in ("web_search_call", "file_search_call", "computer_call"):
            what = item.get("action") or {k: item[k] for k in ("queries", "query") if k in item}
            parts.append(common.tool_call(item.get("id"), kind.removesuffix("_call"), what))
        else:
            notes.append(f"dropped a {kind or 'untyped'} output item")
    return "\n\n".join(t for t in texts if t), parts, notes


def _texts(content: Any) -> list[str]:
    """The texts of a list of content pieces (`{type: output_text|summary_text|…, text}`)."""
    if isinstance(content, str):
        return [content] if content.strip() else []
    found = []
    for piece in content if isinstance(content, list) else []:
        if isinstance(piece, dict) and isinstance(piece.get("text"), str) and piece["text"].strip():
            found.append(piece["text"])
    return found


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
