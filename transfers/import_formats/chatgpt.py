"""ChatGPT's data export (`conversations.json`, alone or in the zip it arrives in).

A conversation is a `mapping` of nodes (`{id: {message, parent, children}}`) with the
leaf the person was on in `current_node`. What a node holds, and what it becomes here:

- a user's or the assistant's words (`content_type` text / multimodal_text / code, for
  everyone): a message; images and other attachments are named in the text and noted;
- the assistant's call to one of ChatGPT's tools (`recipient` not "all": browsing, Python,
  image generation, memory) and the tool's answer (`author.role` "tool": browsing
  displays, quotes, execution output, errors): `tool_call` / `tool_result` parts of the
  reply that follows;
- a reasoning model's thoughts (`content_type` thoughts, with `reasoning_recap`): a
  `thinking` part of the reply that follows;
- citation markers in a reply (`【3:0†source】`, or the private-use `cite` markers of newer
  exports): Markdown links built from the message's `citations` / `content_references`,
  and a `references` part listing the sources;
- a reply cut short (`finish_details.type` interrupted or max_tokens, `status` in_progress):
  `finish_reason` interrupted (or max_tokens), so it can be continued;
- hidden turns (system prompts, custom instructions, memory context): dropped and noted.
"""

from __future__ import annotations

import re
from typing import Any

from conversations.steps import REASONING

from . import common
from .common import Node

NAME = "chatgpt"
# Markers a reply's text holds where a source was cited: 【3:0†source】, and newer
# exports' private-use sequences (U+E200 … U+E201).
STRAY_MARKER = re.compile("【[^】]{0,80}†[^】]{0,80}】|\ue200[^\ue201]{0,200}\ue201")
# Private-use characters newer exports put around markers and entities, never words.
PRIVATE_USE = re.compile("[\ue200-\ue204]")
RECAP_SECONDS = re.compile(r"(\d+)\s*s")
CUT = {"interrupted": "interrupted", "max_tokens": "max_tokens"}
# Distinct citation markers turned into links in one reply (each is a pass over its text).
MAX_MARKERS = 500


def matches(item: dict[str, Any]) -> bool:
    return "mapping" in item


def title(item: dict[str, Any]) -> str:
    return common.label(item.get("title"))


def read(item: dict[str, Any]) -> dict[str, Any]:
    mapping = item["mapping"]
    if not isinstance(mapping, dict):
        raise ValueError("mapping is not an object")
    default_model = item.get("default_model_slug") or ""
    nodes = [_node(str(node_id), node, mapping, default_model) for node_id, node in mapping.items()]
    _time_the_thoughts(nodes, mapping)
    messages, current = common.build(nodes, source=NAME, leaf=item.get("current_node"))
    return common.conversation(
        title=item.get("title"),
        created_at=common.time(item.get("create_time")),
        messages=messages,
        current=current,
    )


def _node(node_id: str, node: dict[str, Any], mapping: dict[str, Any], default_model: str) -> Node:
    parent = node.get("parent")
    parent = None if parent is None else str(parent)
    raw = node.get("message")
    if not raw:
        return Node(id=node_id, parent_id=parent, role=None)
    author = raw.get("author") or {}
    role = author.get("role")
    content = raw.get("content") or {}
    kind = content.get("content_type", "text")
    meta = raw.get("metadata") or {}
    created = common.time(raw.get("create_time"))
    recipient = raw.get("recipient")

    if role == "tool":
        call = parent if _is_call(mapping.get(parent or "")) else node_id
        text, notes = _tool_output(kind, content)
        result = common.tool_result(
            call, author.get("name") or "tool", text, is_error=kind == "system_error"
        )
        dropped = "; ".join(notes)
        return Node(id=node_id, parent_id=parent, role=None, parts=[result], dropped=dropped)
    if recipient not in (None, "all"):  # the assistant calling one of ChatGPT's tools
        text, _ = _text(kind, content)
        return Node(
            id=node_id,
            parent_id=parent,
            role=None,
            parts=[common.tool_call(node_id, recipient, _args(text))],
        )
    if kind == "thoughts":
        thoughts = content.get("thoughts") or []
        text = "\n\n".join(_thought(t) for t in thoughts if isinstance(t, dict))
        seconds = meta.get("finished_duration_sec")
        parts = [common.reasoning(text, seconds=seconds)] if text.strip() else []
        return Node(id=node_id, parent_id=parent, role=None, parts=parts)
    if kind == "reasoning_recap":  # "Thought for 7 seconds": the label of the thoughts
        return Node(id=node_id, parent_id=parent, role=None)

    text, notes = _text(kind, content)
    for attachment in _objects(meta.get("attachments")):
        name = common.label(attachment.get("name"), 255) or "file"
        text += f"\n\n[attachment: {name}]"
        notes.append(f"attachment {name} kept as its name only")
    hidden = bool(meta.get("is_visually_hidden_from_conversation"))
    if role not in ("user", "assistant", "system") or hidden or not text.strip():
        what = _hidden_what(role, kind, text)
        return Node(id=node_id, parent_id=parent, role=None, dropped=what)
    parts: list[dict[str, Any]] = []
    if role == "assistant":
        text, parts, cited_notes = _with_citations(text, meta)
        notes += cited_notes
    finish = (meta.get("finish_details") or {}).get("type")
    cut = CUT.get(finish) or ("interrupted" if raw.get("status") == "in_progress" else None)
    return Node(
        id=node_id,
        parent_id=parent,
        role=role,
        content=text,
        parts=parts,
        created_at=created,
        model=(meta.get("model_slug") or default_model) if role == "assistant" else "",
        finish_reason=cut if role == "assistant" else None,
        notes=notes,
    )


def _time_the_thoughts(nodes: list[Node], mapping: dict[str, Any]) -> None:
    """Give a reasoning part the time its recap ("Thought for 38s") says it took."""
    by_id = {node.id: node for node in nodes}
    for node in mapping.values():
        content = ((node or {}).get("message") or {}).get("content") or {}
        if content.get("content_type") != "reasoning_recap":
            continue
        thoughts = by_id.get(str(node.get("parent")))
        parts = thoughts.parts if thoughts is not None and thoughts.role is None else []
        meta = node["message"].get("metadata") or {}
        seconds = meta.get("finished_duration_sec")
        if seconds is None:
            found = RECAP_SECONDS.search(str(content.get("content") or ""))
            seconds = int(found.group(1)) if found else None
        for part in parts:
            if part.get("step") == REASONING and "seconds" not in part:
                part.update(common.reasoning(part["content"], seconds=seconds))


def _is_call(node: Any) -> bool:
    message = node.get("message") if isinstance(node, dict) else None
    return bool(message) and message.get("recipient") not in (None, "all")


def _text(kind: str, content: dict[str, Any]) -> tuple[str, list[str]]:
    """A message's text, and what of it could not be kept."""
    notes: list[str] = []
    if kind in ("text", "multimodal_text"):
        texts = []
        for part in content.get("parts") or []:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("content_type") == "audio_transcription":
                texts.append(str(part.get("text") or ""))  # what was said aloud, as text
            elif not isinstance(part, dict):
                raise ValueError("a message part is neither text nor an object")
            else:
                what = str(part.get("content_type", "attachment"))
                texts.append("[image]" if what == "image_asset_pointer" else f"[{what}]")
                notes.append(f"dropped a {what}")
        return "\n".join(t for t in texts if t), notes
    if kind == "code":
        return f"```\n{content.get('text', '')}\n```", notes
    return "", notes


def _args(text: str) -> str:
    """A tool call's input as it was written (`_text` fenced it as code)."""
    return text.removeprefix("```\n").removesuffix("\n```")


def _tool_output(kind: str, content: dict[str, Any]) -> tuple[str, list[str]]:
    """What a tool answered, as text; and what of it could not be kept."""
    if kind == "tether_browsing_display":
        return str(content.get("result") or content.get("summary") or ""), []
    if kind == "tether_quote":
        pieces = (content.get("title"), content.get("url"), content.get("text"))
        return "\n".join(str(p) for p in pieces if p), []
    if kind in ("execution_output", "system_error"):
        return str(content.get("text") or ""), []
    text, notes = _text(kind, content)
    if not text and kind not in ("text", "multimodal_text", "code"):
        notes.append(f"dropped a tool's {kind} output")
    return text, notes


def _thought(thought: dict[str, Any]) -> str:
    summary, body = thought.get("summary") or "", thought.get("content") or ""
    return f"**{summary}**\n\n{body}" if summary and body else summary or body


def _hidden_what(role: Any, kind: str, text: str) -> str:
    """The note for a message not kept ("" for an empty scaffold nobody wrote)."""
    if kind == "user_editable_context":
        return "dropped the custom instructions"
    if kind == "model_editable_context":
        return "dropped ChatGPT's memory context"
    if role == "system":
        return "dropped a hidden system message" if text.strip() else ""
    if not text.strip():
        return f"dropped a {role or 'message'} message with no text" if role else ""
    return f"dropped a hidden {role} message"


def _with_citations(text: str, meta: dict[str, Any]) -> tuple[str, list[dict[str, Any]], list[str]]:
    """The reply's text with its citation markers as Markdown links to the sources, a
    `references` part listing them, and notes for markers whose source is unknown."""
    cited = meta.get("citations") or meta.get("content_references")
    if not cited and "【" not in text and PRIVATE_USE.search(text) is None:
        return text, [], []  # most replies: nothing to do
    sources: dict[str, list[dict[str, str]]] = {}
    for citation in _objects(meta.get("citations")):
        start, end = citation.get("start_ix"), citation.get("end_ix")
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
            continue
        marker = text[start:end]
        found = (
            _source(citation["metadata"]) if isinstance(citation.get("metadata"), dict) else None
        )
        if found and _is_marker(marker):
            sources.setdefault(marker, []).append(found)
    plain: dict[str, str] = {}  # markers that stand for words (a name), not a source
    for reference in _objects(meta.get("content_references")):
        marker = reference.get("matched_text")
        if not isinstance(marker, str) or not _is_marker(marker) or marker not in text:
            continue
        if reference.get("type") == "alt_text":
            plain[marker] = reference.get("alt") if isinstance(reference.get("alt"), str) else ""
            continue
        items = _objects(reference.get("items")) or [reference]
        found = [s for s in map(_source, items) if s]
        if found:
            sources.setdefault(marker, []).extend(found)
        elif reference.get("type") in ("hidden", "sources_footnote", "nav_list"):
            plain[marker] = ""
    for marker in sorted(sources, key=len, reverse=True)[:MAX_MARKERS]:
        text = _replace(text, marker, _links(sources[marker]))
    for marker, words in plain.items():
        text = text.replace(marker, words)
    stray = len(STRAY_MARKER.findall(text))
    notes = [f"removed {stray} citation marker(s) without a source"] if stray else []
    text = PRIVATE_USE.sub("", STRAY_MARKER.sub("", text))
    listed: dict[str, dict[str, str]] = {}
    for found in sources.values():
        for source in found:
            listed.setdefault(source["url"] or source["title"], source)
    parts = [{"type": "references", "items": list(listed.values())}] if listed else []
    return text, parts, notes


def _is_marker(text: str) -> bool:
    """Whether `text` is a citation marker (never words: a wrong index must not turn a
    word of the reply into a link)."""
    return STRAY_MARKER.fullmatch(text) is not None or PRIVATE_USE.search(text) is not None


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a list the export may leave out, set to null, or get wrong."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _source(meta: dict[str, Any]) -> dict[str, str] | None:
    url = meta.get("url")
    url = url if isinstance(url, str) and url.startswith(("https://", "http://")) else ""
    name = common.label(meta.get("title") or meta.get("attribution") or url, 300)
    if not name:
        return None
    source = {"title": name, "url": url}
    snippet = meta.get("text") or meta.get("snippet")
    if isinstance(snippet, str) and snippet.strip():
        source["snippet"] = snippet[:1000]
    return source


def _links(sources: list[dict[str, str]]) -> str:
    shown = []
    for source in sources:
        name = source["title"].replace("[", "\\[").replace("]", "\\]")
        if source["url"]:
            url = source["url"].replace(" ", "%20").replace("(", "%28").replace(")", "%29")
            shown.append(f"[{name}]({url})")
        else:
            shown.append(name)
    return "(" + ", ".join(dict.fromkeys(shown)) + ")"


def _replace(text: str, marker: str, link: str) -> str:
    """Put `link` where each `marker` was, a space before it unless one is there."""
    pieces = text.split(marker)
    out = pieces[0]
    for piece in pieces[1:]:
        out += ("" if not out or out[-1].isspace() else " ") + link + piece
    return out
