"""What is said in bench/long_conversation.py: the user's message each turn, and the fake
LLM's answers (one summarizer per variant) with a record of every request it was sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.fake_llm import TOPIC, kind_of, request_tokens, summary_reply, typical_reply
from tests.support.openai_replies import Reply, ToolCall, forced_tool, message_texts

NUMBER_EVERY = 3  # a turn whose number divides by this states a number
USER_EN = (
    "This morning I went through the planning notes with the design team again. We talked "
    "about onboarding, the support backlog and how to keep the weekly sync short. "
    "Could you suggest how I should order these topics for Friday's meeting, and which "
    "one I could leave for next week if we run out of time?",
    "I spent the afternoon reviewing pull requests and answering customer emails about the "
    "new dashboard. Some people like it, others miss the old filters. How would you "
    "collect their feedback without drowning in it, and how often should I report back "
    "to the people who wrote in? I do not want the survey to feel like homework.",
    "Our team is thinking about moving the release train from weekly to every two weeks. "
    "It would give QA more room, but product worries that fixes will reach users later. "
    "What would you weigh before deciding, and how would you explain the change to the "
    "support team and to our larger customers before the next quarter starts?",
    "I want to write a short guide for new engineers: how to set up the project, where "
    "the logs are, who to ask about deployments. What sections would you put in it, "
    "and how long should it be so that people actually read it during their first week "
    "on the team, not just skim the headings?",
)
USER_KO = (
    "오늘은 디자인 팀과 분기 계획 문서를 다시 검토했어요. 온보딩 절차와 고객 지원 대기 목록, "
    "주간 회의를 짧게 유지하는 방법을 이야기했는데 금요일 회의 순서를 어떻게 잡으면 좋을까요?",
    "오후에는 코드 리뷰를 하고 새 대시보드에 대한 고객 메일에 답장했어요. 좋아하는 분도 있고 "
    "예전 필터를 찾는 분도 있어요. 의견을 효율적으로 모으는 방법이 있을까요?",
    "팀에서 배포 주기를 매주에서 격주로 바꾸는 것을 고민하고 있어요. 품질 검증 시간은 늘지만 "
    "수정 사항이 늦게 전달될까 걱정돼요. 결정하기 전에 무엇을 따져 봐야 할까요?",
    "신입 개발자를 위한 짧은 안내서를 쓰고 싶어요. 프로젝트 설정, 로그 위치, 배포 담당자 "
    "같은 내용이요. 어떤 목차가 좋을지, 분량은 어느 정도가 적당할지 알려 주세요.",
)
SUMMARY_NUMBERS = {
    "English": "Numbers the user gave: {numbers}.",
    "Korean": "사용자가 말한 숫자: {numbers}.",
}
DIGEST_REPLY = (
    "## Main points\n- The user shared notes about planning, reviews and releases.\n"
    "## Decisions\n- (none)\n## Next actions\n- (none)"
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def user_message(turn: int) -> str:
    """Return the user's message of `turn`: Korean on even turns, a number every third."""
    korean = turn % 2 == 0
    text = (USER_KO if korean else USER_EN)[(turn // 2) % 4]
    if turn % NUMBER_EVERY:
        return text
    amount = f"{100 + turn * 7919 % 90000:,}"
    note = (
        f"참고로 {turn}번 주문은 {amount}원이었어요."
        if korean
        else (f"For the record, order {turn} came to {amount} dollars.")
    )
    return f"{note} {text}"


def stated_numbers(text: str) -> list[str]:
    """Return the distinct numbers of two or more digits in `text`, in order."""
    found = [n for n in _NUMBER.findall(text) if len(re.sub(r"\D", "", n)) >= 2]
    return list(dict.fromkeys(found))


def summary_of(numbers: list[str], language: str) -> str:
    """Return a summary that keeps `numbers`, in `language` (the benchmarks' topic sentence)."""
    if not numbers:
        return TOPIC[language]
    return f"{TOPIC[language]} {SUMMARY_NUMBERS[language].format(numbers='; '.join(numbers))}"


def accepted_summary(body: dict[str, Any]) -> Reply:
    """Summarize as a model the app's check accepts: every number of the new messages; a
    merge keeps the newest half of the two summaries' numbers (the check's floor)."""

    def newest_half(earlier: str, language: str) -> str:
        kept = stated_numbers(earlier)
        return summary_of(kept[len(kept) // 2 :], language)

    return summary_reply(
        body, lambda text, language: summary_of(stated_numbers(text), language), merge=newest_half
    )


SUMMARIZERS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    "accepted": accepted_summary,
    "refused": lambda body: Reply(text="OK"),
    "failed": lambda body: Reply(status=500),
}


def request_kind(body: dict[str, Any]) -> str:
    """Classify a request: router, summarizer, digest (the conversation summary) or main."""
    from agent.digest import DIGEST_MARKER

    systems = message_texts(body, "system")
    if systems and systems[0].startswith(DIGEST_MARKER):
        return "digest"
    return kind_of(body)


@dataclass
class FakeModel:
    """The fake server's responder for one variant; keeps (kind, messages, tokens) of each
    request (the bodies themselves would hold hundreds of megabytes by turn 2,000)."""

    summarize: Callable[[dict[str, Any]], Reply]
    records: list[tuple[str, int, int]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        kind = request_kind(body)
        tokens = request_tokens(body) if kind in ("main", "summarizer") else 0
        self.records.append((kind, len(body.get("messages") or []), tokens))
        if kind == "router":
            name = forced_tool(body)["function"]["name"]
            return Reply(tool_calls=[ToolCall(name, {"route": "agent", "reason": "bench"})])
        if kind == "summarizer":
            return self.summarize(body)
        if kind == "digest":
            return Reply(text=DIGEST_REPLY)
        return typical_reply(body)
