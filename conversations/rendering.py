"""Message Markdown to safe HTML: markdown-it (raw HTML off), Pygments, then nh3.

TeX math comes out as text in `<span class="math inline|display">` or
`<div class="math display">`, and a ```mermaid block as its raw source in
`<pre class="highlight"><code class="language-mermaid">`: the page draws both
(static/js/rich.js)."""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape

import nh3
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from .markdown_math import math_plugin

# Only what markdown-it emits for CommonMark + tables + strikethrough, minus images:
# a remote image in a reply would be a tracking pixel fetched by the reader's browser.
ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s",
    "code", "pre", "blockquote", "ul", "ol", "li", "a", "span", "div",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "span": {"class"},
    "code": {"class"},
    "pre": {"class"},
    "div": {"class"},
    "ol": {"start"},
}
URL_SCHEMES = {"http", "https", "mailto"}
CODE_FORMATTER = HtmlFormatter(nowrap=True, classprefix="")


def _highlight(code: str, lang: str, _attrs: object) -> str:
    """Return a highlighted <pre> block for a fenced code block."""
    name = re.sub(r"[^\w+#.-]", "", (lang or "").split()[0]) if (lang or "").strip() else ""
    label = escape(name, quote=True)
    try:
        # A diagram's source stays raw: the page hands it to Mermaid as it is.
        lexer = get_lexer_by_name(name) if name and name != "mermaid" else None
    except ClassNotFound:
        lexer = None
    body = highlight(code, lexer, CODE_FORMATTER) if lexer else escape(code)
    language = f' class="language-{label}"' if label else ""
    return f'<pre class="highlight"><code{language}>{body}</code></pre>\n'


def _image_as_link(self, tokens, idx, options, env) -> str:
    """Render an image as a link to it, so no remote image loads by itself."""
    token = tokens[idx]
    src = escape(str(token.attrGet("src") or ""), quote=True)
    alt = escape(self.renderInlineAsText(token.children or [], options, env))
    return f'<a href="{src}">{alt or src}</a>'


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.use(math_plugin)
    md.add_render_rule("image", _image_as_link)
    return md


def sanitize_html(html: str) -> str:
    """Keep only the allowlisted tags, attributes and URL schemes of `html`."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def render_markdown(text: str) -> str:
    """Render message Markdown to sanitized HTML; raw HTML in `text` stays text."""
    return sanitize_html(_markdown().render(text or ""))
