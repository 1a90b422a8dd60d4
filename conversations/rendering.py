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
    "a": {"href", "title", "class", "target"},
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


# `[1]`, `[1, 3]` or `[1][2]`: a reply citing its sources by number (agent/citations.py).
CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")


def _citation(state, silent: bool) -> bool:
    """Read `[n]` (or `[n, m]`) as a citation when every number names one of the reply's
    sources (`env["citations"]`); anything else stays text. Real links come first, and
    keep their brackets (`[see [1]](…)` is a link)."""
    citations = state.env.get("citations") if isinstance(state.env, dict) else None
    if not citations or state.src[state.pos] != "[":
        return False
    # Scanning a link's label (silent), or inside a link's text: the brackets stay the link's.
    if silent or state.linkLevel > 0:
        return False
    if state.pos > 0 and (state.src[state.pos - 1].isalnum() or state.src[state.pos - 1] == "_"):
        return False  # x[1]: an index, not a citation
    found = CITATION.match(state.src, state.pos)
    if found is None:
        return False
    numbers = [int(n) for n in found.group(1).split(",")]
    if not all(n in citations for n in numbers):
        return False
    token = state.push("citation", "", 0)
    token.meta = {"numbers": numbers}
    state.pos = found.end()
    return True


def _render_citation(self, tokens, idx, options, env) -> str:
    """A citation as links to the passages, each labelled with its number."""
    links = []
    for n in tokens[idx].meta["numbers"]:
        source = env["citations"][n]
        href = escape(source["url"], quote=True)
        title = escape(source.get("title") or "", quote=True)
        links.append(f'<a class="cite" href="{href}" title="{title}" target="_blank">{n}</a>')
    return "".join(links)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.use(math_plugin)
    md.add_render_rule("image", _image_as_link)
    md.inline.ruler.after("link", "citation", _citation)
    md.add_render_rule("citation", _render_citation)
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


def render_markdown(text: str, citations: dict[int, dict[str, str]] | None = None) -> str:
    """Render message Markdown to sanitized HTML; raw HTML in `text` stays text. With
    `citations` ({n: {url, title}}), `[n]` becomes a link to source n."""
    return sanitize_html(_markdown().render(text or "", {"citations": citations or {}}))
