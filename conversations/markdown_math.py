"""TeX math in message Markdown: markdown-it rules that keep `$…$`, `$$…$$`, `\\(…\\)` and
`\\[…\\]` away from Markdown and emit them as text in a `math` element for KaTeX.

Markdown would otherwise eat the TeX (`\\(` loses its backslash, `a_1 b_2` turns into
emphasis). Code spans and code blocks are parsed by markdown-it before these rules see
them, so code is never math. A single `$` follows Pandoc's rules, so prices stay prices:
no space after the opening `$`, none before the closing one, no digit right after it.
"""

from __future__ import annotations

from html import escape

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

# opening delimiter -> (closing delimiter, display mode)
INLINE_DELIMITERS = {"\\(": ("\\)", False), "\\[": ("\\]", True), "$$": ("$$", True)}
BLOCK_DELIMITERS = {"$$": "$$", "\\[": "\\]"}


def math_plugin(md: MarkdownIt) -> None:
    """Add the math rules and their renderers to `md`."""
    md.inline.ruler.before("escape", "math_inline", _math_inline)
    md.block.ruler.before(
        "fence",
        "math_block",
        _math_block,
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )
    md.add_render_rule("math_inline", _render_inline)
    md.add_render_rule("math_block", _render_block)


def _render_inline(self: RendererHTML, tokens: list[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    kind = "display" if token.info == "display" else "inline"
    return f'<span class="math {kind}">{escape(token.content, quote=False)}</span>'


def _render_block(self: RendererHTML, tokens: list[Token], idx: int, options, env) -> str:
    return f'<div class="math display">{escape(tokens[idx].content, quote=False)}</div>\n'


def _find_closer(state: StateInline, closer: str, start: int) -> int:
    """Return where `closer` next occurs in the inline text, or -1.

    Remembers a miss: later openers of an unclosed delimiter would each scan to the end
    of the paragraph again, which is quadratic in the number of openers."""
    misses: dict[tuple[str, int, str], int] = state.env.setdefault("math_misses", {})
    key = (state.src, state.posMax, closer)  # a link's label is parsed with a shorter end
    if start >= misses.get(key, start + 1):
        return -1
    found = state.src.find(closer, start, state.posMax)
    if found < 0:
        misses[key] = min(start, misses.get(key, start))
    return found


def _math_inline(state: StateInline, silent: bool) -> bool:
    src, start = state.src, state.pos
    opener = src[start : start + 2]
    if opener in INLINE_DELIMITERS:
        closer, display = INLINE_DELIMITERS[opener]
        end = _find_closer(state, closer, start + 2)
        if end < 0 or not src[start + 2 : end].strip():
            return False
        content, after = src[start + 2 : end], end + 2
    elif src.startswith("$", start):
        end = _single_dollar_end(state, start)
        if end < 0:
            return False
        content, after, display = src[start + 1 : end], end + 1, False
    else:
        return False
    if not silent:
        token = state.push("math_inline", "span", 0)
        token.content = content.strip() if display else content
        token.info = "display" if display else "inline"
        token.markup = opener if opener in INLINE_DELIMITERS else "$"
    state.pos = after
    return True


def _single_dollar_end(state: StateInline, start: int) -> int:
    """Return the index of the `$` closing the one at `start`, or -1 when it is not math.

    Only the next unescaped `$` can close it (Pandoc): `$5 and $10` is not math."""
    src, maximum = state.src, state.posMax
    if start + 1 >= maximum or src[start + 1].isspace() or src[start + 1] == "$":
        return -1
    end = start + 1
    while True:
        end = src.find("$", end, maximum)
        if end < 0:
            return -1
        if _escaped(src, end):
            end += 1
            continue
        break
    if src[end - 1].isspace() or (end + 1 < maximum and src[end + 1].isdigit()):
        return -1
    return end


def _escaped(src: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes - 1 >= 0 and src[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _math_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """A block that starts with `$$` or `\\[` and ends with `$$` or `\\]` at a line's end."""
    if state.is_code_block(start_line):
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    first = state.src[begin : state.eMarks[start_line]].rstrip()
    opener = first[:2]
    if opener not in BLOCK_DELIMITERS:
        return False
    closer = BLOCK_DELIMITERS[opener]
    rest = first[2:]
    if closer in rest:  # $$ x $$ on one line: nothing may follow
        end = rest.index(closer)
        if rest[end + 2 :].strip() or not rest[:end].strip():
            return False
        content, last_line = rest[:end], start_line
    else:
        found = _block_end(state, start_line, end_line, closer)
        if found is None:
            return False
        last_line, last_text = found
        middle = state.getLines(start_line + 1, last_line, state.sCount[start_line], False)
        content = "\n".join(part for part in (rest, middle.rstrip("\n"), last_text) if part.strip())
        if not content.strip():
            return False
    if silent:
        return True
    state.line = last_line + 1
    token = state.push("math_block", "div", 0)
    token.block = True
    token.content = content.strip()
    token.markup = opener
    token.map = [start_line, state.line]
    return True


def _block_end(
    state: StateBlock, start_line: int, end_line: int, closer: str
) -> tuple[int, str] | None:
    """Return the line ending with `closer` and its text before it; None at a blank line,
    a line indented less than the block, or the end (then it was no math block).

    Remembers a miss, as `_find_closer` does: a paragraph asks this of every line."""
    misses: dict[tuple[str, str, int, int], tuple[int, int]] = state.env.setdefault(
        "math_block_misses", {}
    )
    key = (state.src, closer, end_line, state.blkIndent)
    first_miss, stop = misses.get(key, (0, -1))
    if first_miss <= start_line < stop:
        return None
    line = start_line + 1
    while line < end_line:
        begin = state.bMarks[line] + state.tShift[line]
        text = state.src[begin : state.eMarks[line]].rstrip()
        if not text or state.sCount[line] < state.blkIndent:
            break
        if text.endswith(closer) and not _escaped(text, len(text) - len(closer)):
            return line, text[: -len(closer)]
        line += 1
    misses[key] = (start_line, line)
    return None
