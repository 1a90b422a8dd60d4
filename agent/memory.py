"""Hybrid memory: which messages to fold into summaries, and the summarizer calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.constants import TAG_NOSTREAM

from agent import prompts
from agent.config import AgentConfig
from agent.extract import (
    fold_extractively,
    segment_max_tokens,
    segment_max_words,
    split_for_summarizer,
    summarizer_input_tokens,
    truncate_to_tokens,
    with_intro,
)
from agent.llm import ask_model
from agent.summary_check import SummaryRefused, refusal
from agent.tokens import (
    estimate_message_tokens,
    estimate_tokens,
    message_text,
)
from text.language import detect_language

__all__ = [
    "INTERNAL_TAG",
    "MemoryPlan",
    "detect_language",
    "estimate_message_tokens",
    "estimate_tokens",
    "fold_into_segments",
    "fold_with_model",
    "fold_without_model",
    "format_summaries",
    "plan_memory",
    "transcript",
]

# Tags every internal LLM call (router, summarizer) so its tokens never reach the user.
INTERNAL_TAG = "agent:internal"
INTERNAL_TAGS = [TAG_NOSTREAM, INTERNAL_TAG]


@dataclass
class MemoryPlan:
    """What the memory part of the prepare step should do this turn."""

    reason: Literal["count", "compress"] | None
    old: list[BaseMessage] = field(default_factory=list)
    kept: list[BaseMessage] = field(default_factory=list)
    # Compression only: the most tokens summaries + kept messages may take.
    budget_tokens: int = 0


def conversation_language(messages: Sequence[BaseMessage], summaries: Sequence[str]) -> str:
    """Return "ko" or "en" from the user's messages (and summaries when there are none)."""
    texts = [message_text(m) for m in messages if isinstance(m, HumanMessage)]
    return detect_language(texts or list(summaries))


def format_summaries(summaries: Sequence[str], language: str) -> str:
    """Return the numbered summary block of the system prompt ("" when empty)."""
    if not summaries:
        return ""
    header = prompts.SUMMARY_HEADER[language]
    parts = [prompts.SUMMARIES_INTRO[language]]
    parts += [f"{header.format(n=i)}\n{text}" for i, text in enumerate(summaries, 1)]
    return "\n\n".join(parts)


def transcript(messages: Sequence[BaseMessage]) -> str:
    """Render messages as plain lines for the summarizer."""
    lines = []
    for message in messages:
        if isinstance(message, HumanMessage):
            lines.append(f"User: {message_text(message)}")
        elif isinstance(message, ToolMessage):
            lines.append(f"Tool {message.name or ''} result: {message_text(message)}")
        elif isinstance(message, AIMessage):
            text = message_text(message)
            calls = ", ".join(f"{c['name']}({c['args']})" for c in message.tool_calls)
            lines.append(f"Assistant: {text}" + (f" [called {calls}]" if calls else ""))
    return "\n".join(lines)


def keep_groups_whole(messages: Sequence[BaseMessage], cut: int) -> int:
    """Move `cut` back so a tool call and its results land on the same side."""
    while 0 < cut < len(messages) and isinstance(messages[cut], ToolMessage):
        cut -= 1
    return cut


def memory_tokens(summaries: Sequence[str], messages: Sequence[BaseMessage], cal: float) -> int:
    """Estimate the tokens the memory (summaries + kept messages) takes in a prompt."""
    summary_tokens = sum(estimate_tokens(s, cal) + 8 for s in summaries)
    return summary_tokens + estimate_message_tokens(messages, cal)


def plan_memory(
    messages: Sequence[BaseMessage],
    summaries: Sequence[str],
    config: AgentConfig,
    *,
    calibration: float = 1.0,
    overhead_tokens: int = 0,
) -> MemoryPlan:
    """Decide whether to summarize (too many messages) or compress (context too big)."""
    context = overhead_tokens + memory_tokens(summaries, messages, calibration)
    if context > config.compression_threshold * config.context_window:
        return _plan_compression(messages, config, calibration, overhead_tokens)
    if len(messages) > config.memory_max_messages:
        cut = keep_groups_whole(messages, len(messages) - config.memory_keep_recent)
        if cut > 0:
            return MemoryPlan("count", list(messages[:cut]), list(messages[cut:]))
    return MemoryPlan(None, [], list(messages))


def _plan_compression(
    messages: Sequence[BaseMessage], config: AgentConfig, calibration: float, overhead: int = 0
) -> MemoryPlan:
    """Keep the newest messages that fit in half the target; fold the rest.

    The target is for the whole request, so the fixed part (instructions, documents,
    tool schemas) comes off the memory's budget first.
    """
    target = int(config.compression_target * config.context_window)
    budget = max(target - overhead, target // 4)
    cut = len(messages) - 1  # the user's current message always stays verbatim
    while cut > 0 and estimate_message_tokens(messages[cut - 1 :], calibration) <= budget // 2:
        cut -= 1
    # Moving forward folds a whole tool group into the summary instead of splitting it.
    while cut < len(messages) - 1 and isinstance(messages[cut], ToolMessage):
        cut += 1
    return MemoryPlan("compress", list(messages[:cut]), list(messages[cut:]), budget)


def summary_max_tokens(words: int) -> int:
    """Return the most tokens a summarizer may answer with for `words` words (a word is one
    to two tokens, Korean more; a merge answers two parts)."""
    return 4 * words + 64


def _system(template: str, language: str, max_words: int) -> SystemMessage:
    """Return a summarizer system message in the conversation's language."""
    name = prompts.LANGUAGE_NAMES[language]
    return SystemMessage(template.format(language_name=name, max_words=max_words))


async def _summarize(
    model: BaseChatModel, system: SystemMessage, request: str, max_tokens: int
) -> AIMessage:
    """Call the summarizer once, tagged so its tokens stay internal."""
    return await ask_model(
        model,
        [system, HumanMessage(request)],
        max_tokens=max_tokens,
        config={"tags": INTERNAL_TAGS, "run_name": "summarizer"},
    )


def _split_merge_reply(text: str, first: str, second: str) -> tuple[str, str]:
    """Split a merge reply into (merged, new); keep both old texts if the form is off."""
    if prompts.MERGED_MARKER in text and prompts.NEW_MARKER in text:
        head, _, new = text.partition(prompts.NEW_MARKER)
        merged = head.split(prompts.MERGED_MARKER, 1)[1]
        if merged.strip() and new.strip():
            return merged.strip(), new.strip()
    return f"{first}\n{second}", text.strip()


def _user_said(messages: Sequence[BaseMessage]) -> str:
    """Return what the user said in `messages` (the facts a summary must keep)."""
    return "\n".join(message_text(m) for m in messages if isinstance(m, HumanMessage))


def checked(text: str, *, source: str, stated: str, language: str, replies: list[AIMessage]) -> str:
    """Return `text` if it may replace `source`; else raise SummaryRefused."""
    reason = refusal(text, source=source, stated=stated, language=language)
    if reason is not None:
        raise SummaryRefused(reason, replies)
    return text.strip()


async def fold_into_segments(
    model: BaseChatModel,
    summaries: list[str],
    old: list[BaseMessage],
    config: AgentConfig,
    language: str,
) -> tuple[list[str], list[AIMessage], str]:
    """Summarize `old` into a new segment; merge the two oldest on overflow (one call)."""
    words = segment_max_words(config)
    lines = transcript(old)
    said = _user_said(old)
    overflow = len(summaries) + 1 > config.memory_max_summaries
    if overflow and len(summaries) >= 2 and config.memory_max_summaries >= 2:
        if config.summary_overflow != "drop":
            first, second, *rest = summaries
            request = prompts.MERGE_REQUEST.format(first=first, second=second, transcript=lines)
            system = _system(prompts.MERGE_SYSTEM, language, words)
            reply = await _summarize(model, system, request, summary_max_tokens(words))
            merged, new = _split_merge_reply(message_text(reply), first, second)
            both = f"{first}\n{second}"
            merged = checked(merged, source=both, stated=both, language=language, replies=[reply])
            new = checked(new, source=lines, stated=said, language=language, replies=[reply])
            cap = segment_max_tokens(config)
            merged, new = truncate_to_tokens(merged, cap), truncate_to_tokens(new, cap)
            return [merged, *rest, new], [reply], "merged the two oldest summaries"
    elif overflow and config.summary_overflow != "drop":
        # A window of one segment: fold everything into it.
        return await compress_into_one(model, summaries, old, language, words * 4 // 3)
    system = _system(prompts.SUMMARIZE_SYSTEM, language, words)
    request = prompts.SUMMARIZE_REQUEST.format(transcript=lines)
    reply = await _summarize(model, system, request, summary_max_tokens(words))
    text = checked(
        message_text(reply), source=lines, stated=said, language=language, replies=[reply]
    )
    text = truncate_to_tokens(text, segment_max_tokens(config))
    if overflow:  # seed 001's window: the oldest summary goes
        return (
            [*summaries, text][-config.memory_max_summaries :],
            [reply],
            "dropped the oldest summary",
        )
    return [*summaries, text], [reply], "added a summary"


async def compress_into_one(
    model: BaseChatModel,
    summaries: list[str],
    old: list[BaseMessage],
    language: str,
    max_tokens: int,
) -> tuple[list[str], list[AIMessage], str]:
    """Fold every summary and `old` into one segment of at most `max_tokens`."""
    words = max(20, int(max_tokens * 0.6))
    block = "\n\n".join(f"({i}) {s}" for i, s in enumerate(summaries, 1)) or "(none)"
    lines = transcript(old)
    system = _system(prompts.SUMMARIZE_SYSTEM, language, words)
    request = prompts.COMPRESS_REQUEST.format(summaries=block, transcript=lines)
    reply = await _summarize(model, system, request, summary_max_tokens(words))
    stated = "\n".join([*summaries, _user_said(old)])
    text = checked(
        message_text(reply),
        source=f"{block}\n{lines}",
        stated=stated,
        language=language,
        replies=[reply],
    )
    return [truncate_to_tokens(text, max_tokens)], [reply], "compressed into one summary"


def compress_extractively(
    summaries: Sequence[str], old: Sequence[BaseMessage], max_tokens: int, language: str
) -> str:
    """Return every summary and what the user said in `old` as one segment, no model."""
    said = [message_text(m) for m in old if isinstance(m, HumanMessage)]
    return with_intro([*summaries, *said], max_tokens, language)


def fold_without_model(
    plan: MemoryPlan, summaries: list[str], config: AgentConfig, language: str, room: int
) -> list[str]:
    """Return the summaries with `plan.old` folded in without the model (bounded).

    `room`: the tokens a compression may leave (its one segment's cap)."""
    if plan.reason == "count":
        return fold_extractively(summaries, plan.old, config, language)
    return [compress_extractively(summaries, plan.old, room, language)]


async def fold_with_model(
    model: BaseChatModel,
    plan: MemoryPlan,
    summaries: list[str],
    config: AgentConfig,
    language: str,
    room: int,
) -> tuple[list[str], list[AIMessage], str]:
    """Fold `plan.old` into the summaries with the summarizer (raises SummaryRefused or
    the call's error). Messages beyond what one summarizer request may carry (a rebuilt
    or imported branch) go in as an extract first; the newest are summarized."""
    extracted, recent = split_for_summarizer(plan.old, summarizer_input_tokens(config))
    if extracted:
        summaries = fold_without_model(
            MemoryPlan(plan.reason, extracted), summaries, config, language, room
        )
    if not recent:  # one message larger than a request: its extract is all there is
        return summaries, [], "kept what the user said"
    if plan.reason == "count":
        return await fold_into_segments(model, summaries, recent, config, language)
    return await compress_into_one(model, summaries, recent, language, room)
