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
