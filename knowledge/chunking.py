"""Split a document's text into sections (by its headings) and sections into chunks.

Headings are Markdown headings (`## 3.2 Leave policy`) or, in a document without any,
numbered lines: `3.2 Leave policy`, `제3조(연차휴가)`, `제2장 근로시간`, `Article 7`. A
section runs from its heading to the next heading; chunks are contiguous slices of a
section's body that overlap a little, so a sentence cut at one edge is whole in the other.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

CODE_FENCE = re.compile(r"\n```")
MARKDOWN_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,3})\.?[ \t]+(\S.*)$")
KOREAN = re.compile(
    r"^(제[ \t]*\d{1,4}[ \t]*([조장절관편]))[ \t]*"  # 제3조
    r"(?:[(（【\[]([^)）】\]]{1,60})[)）】\]])?[ \t]*(.*)$"  # (연차휴가) and the body, if any
)
WORDED = re.compile(
    r"^((?:Article|Section|Chapter|Part)[ \t]+\d{1,3}(?:\.\d{1,3})*)\.?[ \t]*[:.\-–]?[ \t]*(.*)$",
    re.I,
)
KOREAN_LEVELS = {"편": 1, "장": 1, "관": 2, "절": 2, "조": 3}
MAX_TITLE_CHARS = 80
# A document has at most this many sections; headings after that stay in the last
# section's text. Bounds the work (and the rows) of a document made of headings only.
MAX_SECTIONS = 2000
SENTENCE_END = re.compile(r"(?:[.!?。]|다\.)[\"')\]]*\s")


@dataclass(frozen=True)
class Heading:
    number: str
    title: str
    level: int
    text: str = ""  # as written, without Markdown marks or the body that follows on its line


@dataclass(frozen=True)
class Section:
    index: int
    level: int
    number: str
    title: str
    heading: str
    start: int  # where the heading line starts
    body_start: int
    end: int


@dataclass(frozen=True)
class ChunkDraft:
    ordinal: int
    section: Section
    text: str
    start: int
    end: int


def parse_heading(line: str, *, markdown_level: int = 0) -> tuple[Heading, str] | None:
    """Return the heading a line starts with and the text after it on the line, if any."""
    line = line.strip()
    if match := KOREAN.match(line):
        number = re.sub(r"\s+", "", match.group(1))
        title, rest = (match.group(3) or "").strip(), match.group(4).strip()
        if not title and len(rest) <= MAX_TITLE_CHARS and not _sentence_like(rest):
            title, rest = rest, ""
        level = markdown_level or KOREAN_LEVELS.get(match.group(2), 3)
        written = line[: len(line) - len(rest)].strip() if rest else line
        return Heading(number=number, title=title, level=level, text=written), rest
    if match := WORDED.match(line):
        number, title = match.group(1), match.group(2).strip()
        if markdown_level or (len(title) <= MAX_TITLE_CHARS and not _sentence_like(title)):
            return Heading(number, title, markdown_level or 1, line), ""
        return None
    if match := NUMBERED.match(line):
        number, title = match.group(1), match.group(2).strip()
        if markdown_level:
            return Heading(number, title, markdown_level, line), ""
        if len(title) <= MAX_TITLE_CHARS and not _sentence_like(title) and len(title.split()) <= 10:
            return Heading(number, title, number.count(".") + 1, line), ""
        return None
    if markdown_level:
        return Heading("", line, markdown_level, line), ""
    return None


def _sentence_like(text: str) -> bool:
    return text.endswith((".", "。", ":", ";", ",", "?", "!", "다")) or text == ""


def split_sections(text: str) -> list[Section]:
    """Return the sections of `text` in order; text before the first heading is section 0."""
    marks = _markdown_headings(text) if MARKDOWN_HEADING.search(text) else _line_headings(text)
    sections: list[Section] = []
    if not marks or text[: marks[0][0]].strip():
        first_end = marks[0][0] if marks else len(text)
        sections.append(Section(0, 0, "", "", "", 0, 0, first_end))
    for n, (start, body_start, heading) in enumerate(marks):
        end = marks[n + 1][0] if n + 1 < len(marks) else len(text)
        label = " ".join(heading.text.split())
        sections.append(
            Section(
                index=len(sections),
                level=heading.level,
                number=heading.number,
                title=heading.title,
                heading=label,
                start=start,
                body_start=body_start,
                end=end,
            )
        )
    return sections


def _markdown_headings(text: str) -> list[tuple[int, int, Heading]]:
    # Where the code fences are, found once: "is this heading inside a fence?" is then a
    # binary search, not a count from the start of the text per heading (quadratic).
    fences = [m.start() for m in CODE_FENCE.finditer(text)]
    marks = []
    for match in MARKDOWN_HEADING.finditer(text):
        if bisect.bisect_left(fences, match.start()) % 2 == 1:
            continue
        parsed = parse_heading(match.group(2), markdown_level=len(match.group(1)))
        if parsed is not None:
            marks.append((match.start(), match.end(), parsed[0]))
            if len(marks) == MAX_SECTIONS:
                break
    return marks


def _line_headings(text: str) -> list[tuple[int, int, Heading]]:
    marks = []
    offset = 0
    for line in text.split("\n"):
        parsed = parse_heading(line) if line.strip() else None
        if parsed is not None:
            heading, rest = parsed
            # The body starts on the same line when the heading carries the first sentence.
            body_start = offset + len(line) - len(rest) if rest else offset + len(line)
            marks.append((offset, body_start, heading))
            if len(marks) == MAX_SECTIONS:
                break
        offset += len(line) + 1
    return marks


def chunk_sections(
    text: str, sections: list[Section], *, size: int, overlap: int
) -> list[ChunkDraft]:
    """Return the chunks of every section's body (a heading-only section has none)."""
    drafts: list[ChunkDraft] = []
    for section in sections:
        for start, end in _slices(text, section.body_start, section.end, size, overlap):
            drafts.append(ChunkDraft(len(drafts), section, text[start:end], start, end))
    return drafts


def _slices(text: str, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    start, end = _trim(text, start, end)
    slices: list[tuple[int, int]] = []
    while start < end:
        stop = end if end - start <= size else _break_point(text, start, start + size)
        piece = _trim(text, start, stop)
        if piece[0] < piece[1]:
            slices.append(piece)
        if stop >= end:
            break
        start = _word_start(text, max(stop - overlap, start + 1), stop)
    return slices


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _break_point(text: str, start: int, limit: int) -> int:
    """Return where to end a chunk: a paragraph, line, sentence or word break before limit."""
    floor = start + (limit - start) // 2
    window = text[floor:limit]
    for finder in (lambda w: w.rfind("\n\n"), lambda w: w.rfind("\n"), _last_sentence_end):
        found = finder(window)
        if found > 0:
            return floor + found + 1
    space = window.rfind(" ")
    return floor + space + 1 if space > 0 else limit


def _last_sentence_end(window: str) -> int:
    ends = [m.end() - 1 for m in SENTENCE_END.finditer(window)]
    return ends[-1] if ends else -1


def _word_start(text: str, position: int, limit: int) -> int:
    # Start an overlap at a word boundary so no chunk begins mid-word.
    while position < limit and not text[position - 1].isspace():
        position += 1
    return position
