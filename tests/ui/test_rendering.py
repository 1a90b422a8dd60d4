from __future__ import annotations

from html.parser import HTMLParser

import pytest

from conversations.rendering import ALLOWED_TAGS, render_markdown


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


def _tags(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


@pytest.mark.parametrize(
    "payload",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        '<a href="javascript:alert(1)">y</a>',
        "![x](javascript:alert(1))",
        '<iframe src="https://evil.example"></iframe>',
        "<svg onload=alert(1)>",
    ],
)
def test_markdown_never_emits_active_html(payload):
    for tag, attrs in _tags(render_markdown(payload)):
        assert tag in ALLOWED_TAGS
        for name, value in attrs:
            assert not name.startswith("on")
            assert not (value or "").strip().lower().startswith("javascript:")


def test_raw_html_in_markdown_is_shown_as_text():
    assert "&lt;b&gt;bold&lt;/b&gt;" in render_markdown("<b>bold</b>")


def test_code_blocks_are_highlighted_and_escaped():
    html = render_markdown('```python\nprint("a<b")\n```')
    assert '<pre class="highlight"><code class="language-python">' in html
    assert '<span class="nb">print</span>' in html
    assert "a&lt;b" in html


def test_unknown_language_is_plain_and_its_name_cannot_break_out():
    html = render_markdown('```evil" onclick="x\ncode\n```')
    assert "onclick" not in html
    assert "code" in html


def test_links_get_safe_rel_and_images_become_links():
    html = render_markdown("[site](https://example.com) ![pic](https://example.com/p.png)")
    assert 'rel="noopener noreferrer nofollow"' in html
    assert '<a href="https://example.com/p.png"' in html
    assert "<img" not in html


def test_tables_and_strikethrough_render():
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~")
    assert "<table>" in html and "<td>1</td>" in html
    assert "<s>gone</s>" in html


@pytest.mark.parametrize(
    ("text", "tex", "kind"),
    [
        ("Euler: $e^{i\\pi}+1=0$.", "e^{i\\pi}+1=0", "inline"),
        ("$a_1 b_2 * c_3 * d$", "a_1 b_2 * c_3 * d", "inline"),
        ("\\(a_1 + \\beta\\)", "a_1 + \\beta", "inline"),
        ("so \\[x^2\\] here", "x^2", "display"),
        ("so $$\\sum_i x_i$$ here", "\\sum_i x_i", "display"),
        ("한국어 $x^2$는 제곱", "x^2", "inline"),
        ("$\\$5$", "\\$5", "inline"),
    ],
)
def test_inline_math_reaches_the_page_as_tex_text(text, tex, kind):
    html = render_markdown(text)
    assert f'<span class="math {kind}">{tex}</span>' in html
    assert "<em>" not in html


@pytest.mark.parametrize(
    "text",
    [
        "$$\n\\int_0^1 x_i\\,dx\n$$",
        "$$ \\int_0^1 x_i\\,dx $$",
        "\\[\n\\int_0^1 x_i\\,dx\n\\]",
        "Before:\n$$\n\\int_0^1 x_i\\,dx\n$$\nafter.",
        "> $$\n> \\int_0^1 x_i\\,dx\n> $$",
    ],
)
def test_display_math_blocks_are_kept_whole(text):
    assert '<div class="math display">\\int_0^1 x_i\\,dx</div>' in render_markdown(text)


def test_a_multiline_formula_keeps_its_lines():
    html = render_markdown("$$\na &= b \\\\\nc &= d\n$$")
    assert '<div class="math display">a &amp;= b \\\\\nc &amp;= d</div>' in html


@pytest.mark.parametrize(
    "text",
    [
        "It costs $5 and $10.",
        "$5/$10 a month",
        "Between $ 5 and 6 $ dollars",
        "$x$5 is not math",
        "Escaped \\$x\\$ stays text",
        "one $ alone",
        "$$ nothing closes it",
    ],
)
def test_prices_and_lone_dollars_are_not_math(text):
    html = render_markdown(text)
    assert 'class="math' not in html
    assert "$" in html


@pytest.mark.parametrize(
    "text",
    [
        "`$x_1$` and `\\(y\\)`",
        "```\n$$\nx_1\n$$\n```",
        "    $x_1$ indented code",
        "```python\nprice = '$5' + '$x$'\n```",
    ],
)
def test_code_is_never_math(text):
    html = render_markdown(text)
    assert 'class="math' not in html
    assert "<code" in html


def test_a_mermaid_block_keeps_its_raw_source_unhighlighted():
    html = render_markdown("```mermaid\nflowchart LR\n  A[Start] -->|go| B{x < y}\n```")
    assert (
        '<pre class="highlight"><code class="language-mermaid">flowchart LR\n'
        "  A[Start] --&gt;|go| B{x &lt; y}\n</code></pre>"
    ) in html


@pytest.mark.parametrize(
    "text",
    [
        "$<script>alert(1)</script>$",
        '$$<img src=x onerror="alert(1)">$$',
        '\\(</span><img src=x onerror="alert(1)">\\)',
        "$$\n</div><script>alert(1)</script>\n$$",
        "```mermaid\n</code></pre><script>alert(1)</script>\n```",
        '$x" class="evil" onclick="alert(1)$',
    ],
)
def test_markup_in_tex_or_a_diagram_is_inert_text(text):
    html = render_markdown(text)
    for tag, attrs in _tags(html):
        assert tag in ALLOWED_TAGS and tag not in {"script", "img"}
        for name, value in attrs:
            assert not name.startswith("on")
            assert name != "class" or "evil" not in (value or "")


def test_math_survives_the_sanitizer_with_its_class():
    html = render_markdown("$x$ and\n\n$$\ny\n$$")
    assert [tag for tag, _ in _tags(html)] == ["p", "span", "div"]
    assert _tags(html)[1] == ("span", [("class", "math inline")])
    assert _tags(html)[2] == ("div", [("class", "math display")])


def test_many_unclosed_delimiters_render_in_linear_time():
    import time

    started = time.monotonic()
    for text in ("\\( " * 20_000, "$$a\n" * 10_000, "$5 " * 20_000, "[\\( ](u) " * 5_000):
        render_markdown(text)
    assert time.monotonic() - started < 10


def test_vendored_katex_stylesheet_names_only_fonts_we_ship():
    import re
    from pathlib import Path

    katex = Path(__file__).parents[2] / "static" / "vendor" / "katex"
    urls = set(re.findall(r"url\(([^)]+)\)", (katex / "katex.min.css").read_text()))
    assert urls and all((katex / url).is_file() for url in urls)


class _Reply:
    """A stored reply's fields the citation filter reads."""

    def __init__(self, content: str, *items: dict) -> None:
        self.content = content
        self.parts = [{"type": "references", "items": list(items)}]


DOC = {"n": 1, "document_title": "Handbook", "section": "4.1", "url": "/documents/d1#section-1"}
WEB = {"n": 2, "title": "Example", "url": "https://example.com/a"}


def _cites(html: str) -> list[tuple[str, str]]:
    return [
        (dict(attrs)["href"], dict(attrs).get("title"))
        for tag, attrs in _tags(html)
        if tag == "a" and dict(attrs).get("class") == "cite"
    ]


def test_a_replys_numbers_link_to_its_sources_and_nothing_else_does():
    from conversations.templatetags.chat import reply_markdown

    html = reply_markdown(
        _Reply("Per diem [1], see [2] and [1, 2]. Not [3], `[1]`, [1](https://x.example)", DOC, WEB)
    )
    assert _cites(html) == [
        ("/documents/d1#section-1", "Handbook · 4.1"),
        ("https://example.com/a", "Example"),
        ("/documents/d1#section-1", "Handbook · 4.1"),
        ("https://example.com/a", "Example"),
    ]
    assert "[3]" in html and "<code>[1]</code>" in html  # unknown number, code: text
    assert '<a href="https://x.example"' in html  # a real link stays one


def test_a_number_two_sources_share_stays_text_and_a_hostile_link_is_never_one():
    from conversations.templatetags.chat import reply_markdown

    web_one = {**WEB, "n": 1}
    assert _cites(reply_markdown(_Reply("Two ones [1].", DOC, web_one))) == []
    hostile = {"n": 1, "title": "x", "url": "javascript:alert(1)"}
    html = reply_markdown(_Reply("Bad [1].", hostile))
    assert _cites(html) == [] and "javascript" not in html and "[1]" in html


def test_brackets_that_are_not_ours_stay_text_and_a_repeated_source_still_links():
    from conversations.templatetags.chat import reply_markdown

    # A reply stored before sources were numbered, or imported: its brackets are not ours.
    old = [{k: v for k, v in s.items() if k != "n"} for s in (DOC, WEB)]
    assert _cites(reply_markdown(_Reply("A [2] B [1]", *old))) == []
    # A link's own label, and an index, keep their brackets.
    html = reply_markdown(_Reply("[see [1]](https://e.example/) and x[1] but [1]", DOC))
    assert '<a href="https://e.example/"' in html and "see [1]" in html and "x[1]" in html
    assert _cites(html) == [("/documents/d1#section-1", "Handbook · 4.1")]
    # A tool call answered again from the turn's result announces the same source twice.
    assert len(_cites(reply_markdown(_Reply("Again [1].", DOC, dict(DOC))))) == 1
