"""A reply's Markdown as words to be read aloud: no asterisks, no link addresses, a code
block named (not spelled), a formula named, a table read row by row."""

from __future__ import annotations

import re

from django.utils.translation import gettext as _
from markdown_it import MarkdownIt

from conversations.markdown_math import math_plugin

MAX_CHARS = 4096  # OpenAI's /audio/speech takes at most 4,096 characters
_md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).use(math_plugin)


def speakable(markdown: str) -> str:
    """The words of `markdown`, in reading order, one paragraph a line."""
    lines: list[str] = []
    current: list[str] = []
    for token in _md.parse(markdown or ""):
        if token.type in ("fence", "code_block"):
            language = (token.info or "").split()[0] if token.info else ""
            said = (
                _("A code block in %(language)s.") % {"language": language}
                if language
                else _("A code block.")
            )
            lines.append(said)
        elif token.type == "math_block":
            lines.append(_("A formula."))
        elif token.type == "inline":
            current.append(_inline_words(token))
        elif token.type.endswith("_close") and token.type in (
            "paragraph_close",
            "heading_close",
            "td_close",
            "th_close",
            "list_item_close",
        ):
            text = " ".join(c for c in current if c).strip()
            if text:
                lines.append(text)
            current = []
    spoken = "\n".join(re.sub(r"\s+", " ", line).strip() for line in lines if line.strip())
    return spoken[:MAX_CHARS]


def _inline_words(token) -> str:
    words = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            words.append(child.content)
        elif child.type == "math_inline":
            words.append(_("a formula"))
        elif child.type in ("softbreak", "hardbreak"):
            words.append(" ")
        elif child.type == "image":
            words.append(child.content or "")
    return "".join(words)
