"""A conversation's title, written by the model after its first reply (SPEC)."""

from __future__ import annotations

import re

from agent import prompts
from agent.config import AgentConfig
from agent.llm import ask_configured
from agent.memory import INTERNAL_TAGS
from agent.tokens import message_text
from text.language import detect_language

TITLE_MAX_CHARS = 60
TITLE_MAX_TOKENS = 30  # a title is a few words; a runaway never holds a one-slot server
QUESTION_CHARS = 1500
ANSWER_CHARS = 1500
# What models wrap titles in: quotes, Markdown, a "Title:" label.
_LABEL = re.compile(r"^\s*(title|제목)\s*[:：]\s*", re.IGNORECASE)
_WRAPPING = "\"'“”‘’`*#_「」『』<> "


def clean_title(raw: str, *, language: str) -> str:
    """Return a usable one-line title from a model's answer, or "" (then the first words
    stay): the first non-empty line, unwrapped, at most TITLE_MAX_CHARS, in `language`."""
    line = next((ln for ln in raw.splitlines() if ln.strip(_WRAPPING + "-.")), "")
    line = _LABEL.sub("", line).strip(_WRAPPING).rstrip(".。")
    line = " ".join(line.split())
    if not line or not line.isprintable() or detect_language([line]) != language:
        return ""
    if len(line) > TITLE_MAX_CHARS:
        line = line[: TITLE_MAX_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return line


async def write_title(config: AgentConfig, *, question: str, answer: str) -> str:
    """Ask the model for a short title of an exchange; "" when it gives none usable."""
    language = detect_language([question])
    system = prompts.TITLE_SYSTEM.format(
        language_name=prompts.LANGUAGE_NAMES[language], max_chars=TITLE_MAX_CHARS
    )
    request = prompts.TITLE_REQUEST.format(
        question=question[:QUESTION_CHARS], answer=answer[:ANSWER_CHARS]
    )
    run_config = {"tags": INTERNAL_TAGS, "run_name": "title"}
    reply = await ask_configured(
        config, system, request, max_tokens=TITLE_MAX_TOKENS, run_config=run_config
    )
    text = message_text(reply)
    return clean_title(text, language=language)
