"""The conversation-level summary: main points, decisions, next actions (SPEC)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NotRequired, TypedDict

from agent.config import AgentConfig
from agent.llm import ask_configured
from agent.memory import INTERNAL_TAG
from agent.tokens import estimate_tokens
from text.language import detect_language

SECTION_TITLES = {
    "ko": ("주요 내용", "결정 사항", "다음 할 일"),
    "en": ("Main points", "Decisions", "Next actions"),
}
DIGEST_MAX_TOKENS = 800  # three short sections (main points, decisions, next actions)
DIGEST_MARKER = "Summarize the conversation below for the person who had it."
DIGEST_SYSTEM = (
    DIGEST_MARKER
    + """
Write in {language}. Use at most {max_words} words in total.
Answer in exactly three sections with these headings, each followed by short bullet points
("- "), and "- (none)" when a section has nothing:
## {main}
## {decisions}
## {actions}"""
)
# A rolling summary (an automatic one, replies/summaries.py): the last summary and what
# was said since, not the whole conversation again, so its cost stays flat as it grows.
DIGEST_ROLLING = """
The summary so far comes first, then the conversation since it. Write the whole summary
anew: keep what still holds, add what the conversation since says, drop what it settled
or replaced."""
ROLLING_REQUEST = "Summary so far:\n{previous}\n\nThe conversation since:\n{transcript}"
DECISION_CUES = re.compile(
    r"\b(decided|decide|agreed|will|going to|chose|choose|let's)\b|결정|하기로|정했|합의|확정",
    re.IGNORECASE,
)
ACTION_CUES = re.compile(
    r"\b(next|todo|to do|need to|must|should|remember to|follow up|deadline)\b"
    r"|해야|할 일|다음|준비|마감|까지",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")


class Digest(TypedDict):
    language: str
    main_points: list[str]
    decisions: list[str]
    next_actions: list[str]
    text: str
    # What writing it cost (the model's, estimated when its server does not say): usage.
    usage: NotRequired[tuple[int, int]]


def render_digest(language: str, main: list[str], decisions: list[str], actions: list[str]) -> str:
    """Render the three sections as Markdown."""
    none = "(없음)" if language == "ko" else "(none)"
    blocks = []
    for title, items in zip(SECTION_TITLES[language], (main, decisions, actions), strict=True):
        lines = [f"- {item}" for item in items] or [f"- {none}"]
        blocks.append(f"## {title}\n" + "\n".join(lines))
    return "\n\n".join(blocks)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if len(s.strip()) > 3]


def _limit_words(items: list[str], budget: int) -> tuple[list[str], int]:
    kept: list[str] = []
    for item in items:
        words = len(item.split())
        if words > budget:
            break
        kept.append(item)
        budget -= words
    return kept, budget


def extractive_digest(
    turns: Sequence[tuple[str, str]], max_words: int, *, previous: str = ""
) -> Digest:
    """Summarize without a model: pick the user's statements, decisions and to-dos, the
    newest of them (after those of the `previous` summary, when it rolls)."""
    language = detect_language([text for _, text in turns] + [previous])
    sentences = [s for role, text in turns if role == "user" for s in _sentences(text)]
    decisions = [s for s in sentences if DECISION_CUES.search(s)]
    actions = [s for s in sentences if ACTION_CUES.search(s) and s not in decisions]
    main = [s for s in sentences if s not in decisions and s not in actions]
    if previous:
        before = parse_digest(previous, language)
        main, decisions, actions = (
            _newest_distinct(before[name] + new)
            for name, new in (
                ("main_points", main),
                ("decisions", decisions),
                ("next_actions", actions),
            )
        )
    budget = max(max_words, 10)
    decisions, budget = _limit_words(decisions[-5:], budget // 3 + budget % 3)
    actions, budget = _limit_words(actions[-5:], budget + max_words // 3)
    main, _ = _limit_words(main[-8:], budget + max_words // 3)
    text = render_digest(language, main, decisions, actions)
    return Digest(
        language=language, main_points=main, decisions=decisions, next_actions=actions, text=text
    )


def _newest_distinct(items: list[str]) -> list[str]:
    """Return `items` without repeats, each where it last appears."""
    last = {item: index for index, item in enumerate(items)}
    return [item for index, item in enumerate(items) if last[item] == index]


# "## Title", "**Title**", or a short "Title:" line.
HEADING = re.compile(
    r"^(?:#{1,6}\s*(?P<hashed>.+?)\s*#*"
    r"|\*\*(?P<bold>[^*]+?)\*\*:?"
    r"|(?P<plain>[^-*•\d].{0,40}?):)$"
)
MAIN_CUE = re.compile(r"main|summary|key points|요약|주요|핵심", re.IGNORECASE)
SECTION_CUES = (
    re.compile(r"decision|결정|합의", re.IGNORECASE),
    re.compile(r"next|action|to-?do|follow|다음|할 ?일|후속", re.IGNORECASE),
)
NONE_ITEMS = {"(none)", "none", "(없음)", "없음", "n/a", "-"}
BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")


def _section_of(heading: str) -> int:
    """Return which section a heading names: 0 main points, 1 decisions, 2 next actions."""
    for index, cue in enumerate(SECTION_CUES, start=1):
        if cue.search(heading):
            return index
    return 0


def parse_digest(text: str, language: str) -> Digest:
    """Split a model's answer into main points, decisions and next actions.

    Headings are recognised by what they say (`## Decisions`, `**결정 사항**`,
    `Next actions:`), in any order; text before the first heading, or an answer with no
    headings at all, is kept as main points: a summary is never thrown away for its form.
    """
    sections: list[list[str]] = [[], [], []]
    current = 0
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        heading = HEADING.match(stripped)
        if heading:
            title = heading.group("hashed") or heading.group("bold") or heading.group("plain")
            named = _section_of(title)
            # A "Label:" line is a heading only when it names a section.
            if named or not heading.group("plain") or MAIN_CUE.search(title):
                current = named
                continue
        item = BULLET.sub("", stripped).strip()
        if item and item.lower() not in NONE_ITEMS:
            sections[current].append(item)
    main, decisions, actions = sections
    return Digest(
        language=language,
        main_points=main,
        decisions=decisions,
        next_actions=actions,
        text=render_digest(language, main, decisions, actions),
    )


def fit_transcript(turns: Sequence[tuple[str, str]], *, budget: int) -> str:
    """Return the newest turns as a transcript that fits in `budget` tokens."""
    lines: list[str] = []
    for role, text in reversed(turns):
        line = f"{role}: {text}"
        budget -= estimate_tokens(line) + 4
        if budget < 0 and lines:
            break
        lines.append(line)
    return "\n".join(reversed(lines))


async def summarize_conversation(
    config: AgentConfig,
    turns: Sequence[tuple[str, str]],
    *,
    max_words: int = 200,
    previous: str = "",
) -> Digest:
    """Summarize `(role, text)` turns into main points, decisions and next actions; with
    `previous`, the summary so far, the turns are what was said since it (it rolls)."""
    if config.offline or not turns:
        return extractive_digest(turns, max_words, previous=previous)
    language = detect_language([text for _, text in turns] + [previous])
    main, decisions, actions = SECTION_TITLES[language]
    system = DIGEST_SYSTEM.format(
        language="Korean" if language == "ko" else "English",
        max_words=max_words,
        main=main,
        decisions=decisions,
        actions=actions,
    ) + (DIGEST_ROLLING if previous else "")
    budget = int(config.context_window * 0.5) - estimate_tokens(previous)
    transcript = fit_transcript(turns, budget=max(budget, 1))
    if previous:
        transcript = ROLLING_REQUEST.format(previous=previous, transcript=transcript)
    reply = await ask_configured(
        config,
        system,
        transcript,
        max_tokens=DIGEST_MAX_TOKENS,
        run_config={"tags": [INTERNAL_TAG]},
    )
    digest = parse_digest(str(reply.content), language)
    counted = reply.usage_metadata or {}
    digest["usage"] = (
        int(counted.get("input_tokens") or estimate_tokens(system + transcript)),
        int(counted.get("output_tokens") or estimate_tokens(str(reply.content))),
    )
    return digest
