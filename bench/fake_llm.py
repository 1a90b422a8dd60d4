"""What the benchmarks' fake LLM reads in a request and answers (agent_calls, long_conversation).

Requests are classified and counted as the fake server counts them
(tests/support/fake_openai.py); the answers are a typical short assistant reply and
summaries in the shape the app asks for, in English or Korean.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agent import prompts
from tests.support.openai_replies import Reply, count_tokens, forced_tool, message_texts

# A typical short assistant answer (~100 tokens), in the user's language.
REPLY_EN = (
    "Thanks for the update. It sounds like a productive day: reviewing the planning notes "
    "with design early helps everyone agree on priorities, and keeping the weekly sync short "
    "is a good habit. For the leadership update, lead with the two or three decisions you "
    "need from them, then the risks, then the details. If you want, I can help you draft "
    "that update or turn the backlog into a short prioritised list."
)
REPLY_KO = (
    "공유해 주셔서 감사합니다. 디자인 팀과 계획 문서를 먼저 검토하면 우선순위를 맞추기 쉽고, "
    "주간 회의를 짧게 유지하는 것도 좋은 습관이에요. 지원 대기 목록은 영향이 큰 것부터 "
    "정리하면 좋겠습니다. 원하시면 보고서 초안이나 우선순위 목록을 함께 만들어 드릴게요."
)

# What a summary says besides the facts it keeps, in the language the prompt asks for.
TOPIC = {
    "Korean": "사용자는 업무 계획, 온보딩, 지원 대기 목록과 주간 회의에 대해 이야기했다.",
    "English": "The user talked about planning, onboarding, the support backlog and meetings.",
}


def kind_of(body: dict[str, Any]) -> str:
    """Classify a recorded request: router, summarizer or main model."""
    if forced_tool(body) is not None:
        return "router"
    systems = message_texts(body, "system")
    if systems and systems[0].startswith(prompts.SUMMARIZER_MARKER):
        return "summarizer"
    return "main"


def request_tokens(body: dict[str, Any]) -> int:
    """Count a request's prompt tokens the way the fake server reports them."""
    texts = [*message_texts(body), json.dumps(body.get("tools") or "")]
    return sum(count_tokens(t) + 4 for t in texts)


def typical_reply(body: dict[str, Any]) -> Reply:
    """Answer with the typical short reply, in Korean if the newest user message is."""
    users = message_texts(body, "user")
    korean = bool(users) and re.search(r"[가-힣]", users[-1])
    return Reply(text=REPLY_KO if korean else REPLY_EN)


Summarize = Callable[[str, str], str]  # (text to summarize, "English" | "Korean") -> summary


def summary_reply(
    body: dict[str, Any], summarize: Summarize, *, merge: Summarize | None = None
) -> Reply:
    """Answer a summarizer request in the language it asks for; a merge request's two
    earlier summaries go through `merge` (default: `summarize`), its newer messages
    through `summarize`."""
    system = message_texts(body, "system")[0]
    request = message_texts(body, "user")[-1]
    language = "Korean" if "Write in Korean" in system else "English"
    if prompts.MERGED_MARKER not in system:
        return Reply(text=summarize(request, language))
    earlier, _, newer = request.partition("Newer messages:")
    merged = (merge or summarize)(earlier, language)
    new = summarize(newer, language)
    return Reply(text=f"{prompts.MERGED_MARKER}\n{merged}\n{prompts.NEW_MARKER}\n{new}")
