"""Template helpers for messages: Markdown, parts, the context ledger, search snippets."""

from __future__ import annotations

import functools
import re
from typing import Any

import nh3
from django import template
from django.contrib.staticfiles import finders
from django.utils.safestring import SafeString, mark_safe

from conversations import steps
from conversations.rendering import render_markdown
from conversations.steps import REASONING

register = template.Library()
WEB_URL = re.compile(r"https?://[^\s\"'<>]+")


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    """Render message Markdown as sanitized HTML."""
    return mark_safe(render_markdown(text))


@register.filter
def snippet(html: str) -> SafeString:
    """Keep only <mark> of a search snippet (the search selector escapes the rest)."""
    return mark_safe(nh3.clean(html or "", tags={"mark"}, attributes={}))


@register.filter
def parts_of(message: Any, kinds: str) -> list[dict[str, Any]]:
    """Return the message parts whose type is one of the comma-separated `kinds`."""
    wanted = set(kinds.split(","))
    return [p for p in (message.parts or []) if isinstance(p, dict) and p.get("type") in wanted]


@register.filter
def steps_of(message: Any) -> list[dict[str, Any]]:
    """Return a reply's steps (thinking, tool calls and results), its reasoning aside."""
    found = parts_of(message, "thinking,tool_call,tool_result")
    return [part for part in found if part.get("step") != REASONING]


@register.filter
def reasoning_of(message: Any) -> dict[str, Any] | None:
    """Return a reply's reasoning (a model's thoughts before it answered, as imports keep
    them): `{"content": the thoughts, one block each, "seconds": how long, if known}`."""
    found = [p for p in parts_of(message, "thinking") if p.get("step") == REASONING]
    texts = [p["content"] for p in found if isinstance(p.get("content"), str) and p["content"]]
    if not texts:
        return None
    timed = [p["seconds"] for p in found if isinstance(p.get("seconds"), int)]
    return {"content": "\n\n---\n\n".join(texts), "seconds": sum(timed) if timed else None}


@register.filter(name="reply_markdown")
def reply_markdown(message: Any) -> SafeString:
    """Render a reply's Markdown, its `[n]` citations linked to its sources."""
    return mark_safe(render_markdown(message.content, citations_of(message)))


@register.filter
def sources_of(message: Any) -> list[dict[str, Any]]:
    """Return the sources a reply used (documents, web pages), from its `references` parts,
    once each; `n` is the number the reply cites it by, or None where none was stored (a
    reply from before sources were numbered, an import: its brackets are not ours)."""
    items: list[dict[str, Any]] = []
    seen: set[tuple[Any, Any]] = set()
    for part in parts_of(message, "references"):
        found = part.get("items") or part.get("references") or part.get("sources") or []
        for raw in found:
            if not isinstance(raw, dict):
                continue
            item = _safe_source(raw)
            n = item.get("n")
            item["n"] = n if isinstance(n, int) and not isinstance(n, bool) else None
            key = (item["n"], item.get("url") or id(raw))
            if key not in seen:  # a tool call answered again from this turn's result
                seen.add(key)
                items.append(item)
    return items


def citations_of(message: Any) -> dict[int, dict[str, str]]:
    """Return {n: {url, title}} of the sources a `[n]` in the reply may link to: those with
    a number and a link that no other source of the reply shares (two searches each with
    a [1]: ambiguous, so it stays text)."""
    linked: dict[int, dict[str, str]] = {}
    taken: set[int] = set()
    for item in sources_of(message):
        n = item["n"]
        if n is None:
            continue
        if n in taken:
            linked.pop(n, None)
            continue
        taken.add(n)
        if item.get("url"):
            title = item.get("title") or item.get("document_title") or ""
            section = item.get("section")
            linked[n] = {"url": item["url"], "title": f"{title} · {section}" if section else title}
    return linked


def _safe_source(item: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of a source, its link kept only when it points into our own documents
    pages, or is a web page (a web tool's, an imported reply's citation)."""
    url = item.get("url")
    if isinstance(url, str) and url.startswith("/documents/") and "//" not in url:
        return dict(item)
    if isinstance(url, str) and WEB_URL.fullmatch(url):
        return dict(item)
    return {key: value for key, value in item.items() if key != "url"}


@register.filter
def ledger(message: Any) -> dict[str, Any] | None:
    """Return the context ledger of an assistant message (what the model saw)."""
    context = (message.metadata or {}).get("context")
    return context if isinstance(context, dict) and context else None


@register.filter
def part_text(part: dict[str, Any]) -> str:
    """Return a readable one-block text of a thinking or tool part: its step in the reader's
    language (`step_text`), else what it holds."""
    text = steps.step_text(part)
    if text:
        return text
    for key in ("content", "text", "output", "result"):
        value = part.get(key)
        if isinstance(value, str) and value:
            return value
    if part.get("name") or part.get("args"):
        import json

        return f"{part.get('name', '')}({json.dumps(part.get('args', {}), ensure_ascii=False)})"
    return ""


@register.filter
def step_text(part: dict[str, Any]) -> str:
    """Return a step (thinking, tool call or tool result part) as a sentence in the
    reader's language: `{{ part|step_text }}`."""
    return steps.step_text(part)


@register.filter
def changed_memory(message: Any) -> bool:
    """Whether a reply saved or deleted a memory: `{% if m|changed_memory %}`."""
    return steps.changed_memory(message.parts)


@register.filter
def finish_note(message: Any) -> str:
    """What a reply that did not end by itself says under it, in the reader's language:
    `{{ m|finish_note }}`."""
    return steps.finish_note(message.finish_reason, message.parts)


@register.filter
def step_details(part: dict[str, Any]) -> list[dict[str, str]]:
    """Return a tool step's labelled details ([{label, value}]: a call's input, a result's
    output; nothing for a failure): `{% for d in part|step_details %}`."""
    return steps.step_details(part)


@register.filter
def versions(message: Any) -> dict[str, Any] | None:
    """Return where a message stands among its siblings ({n, count, previous, next}), or
    None when it has none (`sibling_ids` come from tree.with_siblings)."""
    siblings = getattr(message, "sibling_ids", None) or []
    if len(siblings) < 2 or str(message.pk) not in siblings:
        return None
    at = siblings.index(str(message.pk))
    return {
        "n": at + 1,
        "count": len(siblings),
        "previous": siblings[at - 1] if at > 0 else None,
        "next": siblings[at + 1] if at + 1 < len(siblings) else None,
    }


@register.filter
def number(value: Any) -> str:
    """Format a number the way the current language groups digits."""
    from django.utils.formats import number_format

    try:
        return number_format(value, force_grouping=True)
    except (TypeError, ValueError):
        return str(value)


@functools.lru_cache(maxsize=64)
def _icon_svg(name: str) -> str:
    path = finders.find(f"vendor/lucide/{name}.svg")
    if not path or not re.fullmatch(r"[a-z0-9-]+", name):
        return ""
    with open(path, encoding="utf-8") as fh:
        svg = re.sub(r"<!--.*?-->", "", fh.read(), flags=re.S).strip()
    svg = re.sub(r'\s+width="24"\s+height="24"', ' width="18" height="18"', svg, count=1)
    return svg.replace("<svg", '<svg aria-hidden="true" focusable="false"', 1)


@register.simple_tag
def icon(name: str) -> SafeString:
    """Inline a vendored Lucide icon (decorative; the button carries the label)."""
    return mark_safe(_icon_svg(name))
