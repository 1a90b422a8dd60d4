"""A summary is checked before it replaces messages: a refused one is replaced by what the
user said, and the summarizer is asked again only after a pause."""

from __future__ import annotations

from agent.summary_check import numbers, refusal
from agent.threads import read_thread
from tests.agent.helpers import is_summarizer_request, new_id, run_one
from tests.support.openai_replies import Reply, default_responder, message_texts

SOURCE = (
    "User: 제 사번은 58213이고 연차는 15일 남았어요.\n"
    "Assistant: 알겠습니다. 사번 58213, 연차 15일로 기억할게요.\n"
    "User: 다음 주 화요일에 부산 출장이 있어요.\n"
)
SAID = "제 사번은 58213이고 연차는 15일 남았어요.\n다음 주 화요일에 부산 출장이 있어요."


def check(summary: str) -> str | None:
    return refusal(summary, source=SOURCE, stated=SAID, language="ko")


def test_a_faithful_summary_in_the_conversations_language_is_accepted():
    assert check("사용자의 사번은 58213, 남은 연차는 15일. 다음 주 화요일 부산 출장 예정.") is None


def test_a_summary_that_is_empty_wrong_language_or_far_too_short_is_refused():
    assert check("   ") == "empty"
    assert check("The user's employee number is 58213 and 15 days of leave remain.") == (
        "wrong language"
    )
    long_source = SOURCE + "User: 오늘은 디자인 팀과 분기 계획을 길게 검토했어요.\n" * 60
    assert refusal("요약", source=long_source, stated="", language="ko") == "far too short"


def test_a_summary_that_invents_or_loses_numbers_is_refused():
    assert check("사용자의 사번은 58213, 남은 연차는 120일. 부산 출장 예정.").startswith(
        "numbers not in the conversation (120)"
    )
    assert check("사용자는 부산 출장을 앞두고 있으며 연차에 대해 이야기했다.").startswith(
        "lost numbers (2 of 2)"
    )


def test_list_markers_and_one_digit_numbers_are_not_facts():
    assert numbers("1. 사번 58213\n2) 연차 15일\n(3) 3개 회의") == {"58213", "15"}
    assert numbers("1,200,000원, 3.5%") == {"1200000", "35"}


def korean_then_english_summaries(body: dict) -> Reply:
    """Answer chat in Korean, and every summary request in English (a weak model)."""
    if is_summarizer_request(body):
        return Reply(text="The user talked about work and plans for the week ahead.")
    users = message_texts(body, "user")
    if users and "사번" in users[-1]:
        return Reply(text="네, 기억할게요.")
    return default_responder(body)


async def test_a_refused_summary_is_replaced_by_the_users_words_and_retried_after_a_pause(
    online_config, saver, fake_openai
):
    fake_openai.responder = korean_then_english_summaries
    thread = new_id()
    await run_one(online_config, saver, thread, "제 사번은 58213이에요. 꼭 기억해 주세요.")
    for n in range(5):
        result = await run_one(online_config, saver, thread, f"오늘은 회의가 많았어요 ({n})")
    refused = [e for e in result.steps("memory") if e["code"] == "memory.kept_words_refused"]
    assert refused and refused[-1]["params"]["detail"] == "wrong language"
    assert "shortened" in refused[-1]["content"]
    memory = await read_thread(saver, thread)
    # The folded messages left memory anyway; their place is the user's own words.
    assert len(memory["messages"]) <= online_config.memory_keep_recent + 1
    assert len(memory["summaries"]) == 1 and "58213" in memory["summaries"][0]
    assert "The user talked about work" not in memory["summaries"][0]  # nothing refused kept
    agent_calls = [b for b in fake_openai.requests if not is_summarizer_request(b)]
    assert "58213" in str(agent_calls[-1]["messages"])  # the fact is still sent
    assert len([b for b in fake_openai.requests if is_summarizer_request(b)]) == 1

    # The next fold goes without the summarizer (a pause); the one after asks it again.
    for n in range(6):
        await run_one(online_config, saver, thread, f"내일도 회의가 있어요 ({n})")
    summarizer_calls = [b for b in fake_openai.requests if is_summarizer_request(b)]
    assert len(summarizer_calls) == 2
    memory = await read_thread(saver, thread)
    assert len(memory["messages"]) <= online_config.memory_max_messages + 1
    assert "58213" in " ".join(memory["summaries"])
