"""A conversation's current branch as a PDF: fpdf2, the Nanum fonts embedded as subsets.

Each message is its role and time, then its Markdown laid out by fpdf2's `write_html`
(headings, lists, quotes, tables, links, code in a monospaced Hangul font). TeX math is
printed as its source in the monospaced font: readable, never half-drawn. Images in a
reply are links (no remote fetch while exporting). Rows are read a batch at a time; the
document itself is built in memory (fpdf2 writes its cross-reference table last), about
3 KB a message.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from fpdf import FPDF, FontFace
from fpdf.fonts import TextStyle
from markdown_it import MarkdownIt

from conversations.markdown_math import math_plugin
from conversations.models import Conversation
from conversations.schemas import as_json

FONTS = Path(__file__).with_name("fonts")
BODY, CODE = "Nanum", "NanumCoding"
ROLE_LABELS = {"user": _lazy("User"), "assistant": _lazy("Assistant"), "system": _lazy("System")}
ROLE_COLORS = {"user": (37, 99, 235), "assistant": (22, 128, 61), "system": (100, 100, 100)}
# C0 controls (a NUL included) and lone surrogates have no glyph and break the layout.
UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
logger = logging.getLogger(__name__)


def _code(self, tokens, idx, options, env) -> str:
    return f"<pre><code>{escape(tokens[idx].content)}</code></pre>\n"


def _math_inline(self, tokens, idx, options, env) -> str:
    return f"<code>{escape(tokens[idx].content)}</code>"


def _math_block(self, tokens, idx, options, env) -> str:
    return f"<pre><code>{escape(tokens[idx].content.strip())}</code></pre>\n"


def _image(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    src = escape(str(token.attrGet("src") or ""), quote=True)
    alt = escape(self.renderInlineAsText(token.children or [], options, env)) or src
    return f'<a href="{src}">{alt}</a>'


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.enable(["table", "strikethrough"])
    md.use(math_plugin)
    for name, rule in (
        ("fence", _code),
        ("code_block", _code),
        ("math_inline", _math_inline),
        ("math_block", _math_block),
        ("image", _image),
    ):
        md.add_render_rule(name, rule)
    return md


def message_html(text: str) -> str:
    """A message's Markdown as the HTML fpdf2 lays out (raw HTML in it stays text)."""
    html = BETWEEN_BLOCKS.sub(r"\1", _markdown().render(UNPRINTABLE.sub("", text or "")))
    # fpdf2 reads a link's href as given: only web and mail links stay links.
    return re.sub(r'<a href="(?!https?:|mailto:)[^"]*"', '<a href="#"', html)


class _Document(FPDF):
    def __init__(self, title: str) -> None:
        super().__init__(format="A4")
        self.title_text = title
        # Each style is a parse of its file (~12 MB of the export's memory): Hangul has
        # no italic, so emphasis is underlined (TAG_STYLES) and no italic style is loaded.
        self.add_font(BODY, "", FONTS / "NanumGothic.ttf")
        self.add_font(BODY, "B", FONTS / "NanumGothicBold.ttf")
        self.add_font(CODE, "", FONTS / "NanumGothicCoding.ttf")
        self.add_font(CODE, "B", FONTS / "NanumGothicCoding.ttf")  # **`code`**
        self.set_margins(18, 18, 18)
        self.set_auto_page_break(True, margin=18)
        self.set_title(title)
        self.set_creator("chatsite")
        self.alias_nb_pages()

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font(BODY, "", 8)
        self.set_text_color(130, 130, 130)
        self.cell(0, 6, f"{self.title_text[:80]} · {self.page_no()}/{{nb}}", align="C")


INK, SOFT = (20, 20, 20), (95, 95, 95)
TAG_STYLES = {
    "code": FontFace(family=CODE, color=INK),
    "em": FontFace(emphasis="UNDERLINE"),
    "i": FontFace(emphasis="UNDERLINE"),
    "pre": TextStyle(font_family=CODE, font_size_pt=8.5, color=INK, t_margin=2, b_margin=2),
    "blockquote": TextStyle(color=SOFT, l_margin=6, t_margin=2, b_margin=2),
    "a": FontFace(color=(37, 99, 235)),
    **{
        f"h{level}": TextStyle(
            font_family=BODY, font_style="B", font_size_pt=size, color=INK, t_margin=3, b_margin=1
        )
        for level, size in zip(range(1, 7), (15, 13, 11.5, 10.5, 10, 10), strict=True)
    },
}
# markdown-it ends each block with a line break, which fpdf2 lays out as an empty line.
BETWEEN_BLOCKS = re.compile(
    r"(</(?:h[1-6]|p|li|ol|ul|table|thead|tbody|tr|th|td|blockquote|pre)>"
    r"|<(?:ol|ul|table|thead|tbody|tr|blockquote)>)\n"
)


def build_pdf(conversation: Conversation, rows: Iterable[dict[str, Any]]) -> bytes:
    """The PDF of `conversation` with these message rows (its current branch, in order)."""
    title = UNPRINTABLE.sub("", conversation.title or _("Conversation"))
    pdf = _Document(title)
    pdf.add_page()
    pdf.set_font(BODY, "B", 17)
    pdf.multi_cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font(BODY, "", 8.5)
    pdf.set_text_color(110, 110, 110)
    line = _("%(count)s messages · exported %(time)s") % {
        "count": conversation.message_count,
        "time": timezone.now().strftime("%Y-%m-%d %H:%M UTC"),
    }
    pdf.multi_cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    if conversation.summary:
        _block(pdf, _("Summary"), (100, 100, 100), None, conversation.summary)
    for row in rows:
        label = str(ROLE_LABELS.get(row["role"], row["role"]))
        color = ROLE_COLORS.get(row["role"], (100, 100, 100))
        _block(pdf, label, color, row, row["content"])
    return bytes(pdf.output())


def _block(
    pdf: _Document, label: str, color: tuple[int, int, int], row: dict | None, text: str
) -> None:
    pdf.ln(4)
    pdf.set_draw_color(225, 225, 225)
    pdf.line(pdf.l_margin, pdf.get_y(), pdf.w - pdf.r_margin, pdf.get_y())
    pdf.ln(2)
    pdf.set_font(BODY, "B", 9.5)
    pdf.set_text_color(*color)
    heading = label
    if row is not None:
        heading += f"  ·  {as_json(row['created_at'])[:16].replace('T', ' ')} UTC"
        if row.get("model"):
            heading += f"  ·  {row['model']}"
    pdf.multi_cell(0, 5, UNPRINTABLE.sub("", heading), new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(20, 20, 20)
    pdf.set_font(BODY, "", 10)
    try:
        pdf.write_html(
            message_html(text),
            tag_styles=TAG_STYLES,
            warn_on_tags_not_matching=False,
            li_prefix_color=SOFT,
        )
    except Exception:  # a layout fpdf2 cannot place (a very wide table): print it as text
        logger.warning("pdf export: laid out a message as plain text", exc_info=True)
        pdf.set_font(BODY, "", 10)
        pdf.multi_cell(0, 5, UNPRINTABLE.sub("", text), new_x="LMARGIN", new_y="NEXT")
    if row is not None and row.get("attachments"):
        pdf.set_font(BODY, "", 8.5)
        pdf.set_text_color(110, 110, 110)
        names = ", ".join(a["name"] for a in row["attachments"])
        pdf.multi_cell(
            0, 5, UNPRINTABLE.sub("", f"Attachments: {names}"), new_x="LMARGIN", new_y="NEXT"
        )
