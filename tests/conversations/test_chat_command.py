"""`manage.py chat` through the real model path, against a recording OpenAI-compatible server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.digest import DIGEST_MARKER
from agent.prompts import SUMMARIZER_MARKER
from conversations.models import Conversation, Message
from tests.agent.helpers import memory_responder
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import count_tokens, message_texts

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)

FILLERS = [
    "Tell me one thing about the weather in spring, briefly please.",
    "오늘 점심 메뉴로 비빔밥은 어때요? 간단히 답해 주세요.",
    "What is a good name for a small grey cat?",
    "주말에 읽을 만한 책을 한 권 추천해 주세요.",
    "How do I boil an egg so the yolk stays soft?",
    "서울에서 가볼 만한 공원 하나만 알려 주세요.",
    "Give me a synonym for the word happy.",
    "커피와 차 중에 무엇이 더 건강에 좋을까요?",
    "What is the capital of Canada?",
    "운동을 꾸준히 하는 요령을 하나 알려 주세요.",
]


def run_chat(env: dict[str, str], lines: list[str], *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "chat", "--user", "alice", *extra],
        input="".join(f"{line}\n" for line in lines),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def is_summarizer(body: dict) -> bool:
    """Say whether a request wrote a memory segment or the conversation summary."""
    markers = (SUMMARIZER_MARKER, DIGEST_MARKER)
    return any(text.startswith(markers) for text in message_texts(body, "system"))


def main_requests(server: FakeOpenAI) -> list[dict]:
    return [b for b in server.chat_requests() if not is_summarizer(b)]


def verbatim_messages(body: dict) -> int:
    return sum(1 for m in body["messages"] if m["role"] != "system")


def request_tokens(body: dict) -> int:
    texts = [*message_texts(body), json.dumps(body.get("tools") or "")]
    return sum(count_tokens(t) + 4 for t in texts)


@pytest.fixture
def server():
    # Summaries as a faithful model writes them (an echo of the request would be refused).
    with FakeOpenAI(memory_responder) as fake:
        yield fake


@pytest.fixture
def model_env(subprocess_env, server, alice):
    return {
        **subprocess_env,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": server.base_url,
        "MEMORY_MAX_MESSAGES": "10",
        "MEMORY_KEEP_RECENT": "5",
    }


def test_twelve_turns_keep_a_small_window_and_the_first_fact(model_env, server):
    lines = ["Remember this: my locker code is 4417.", *FILLERS, "What is my locker code?"]
    result = run_chat(model_env, lines)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("conversation ")
    requests = main_requests(server)
    assert len(requests) == 12
    assert max(verbatim_messages(body) for body in requests) <= 11
    assert "4417" in json.dumps(requests[-1], ensure_ascii=False)
    conversation = Conversation.objects.get()
    assert conversation.message_count == 24
    replies = Message.objects.filter(role="assistant")
    assert all(m.finish_reason == "end_turn" for m in replies)
    assert all(m.metadata["context"]["message_ids"] for m in replies)


def test_context_past_threshold_is_compressed_to_the_target(model_env, server):
    window = 12000
    env = {**model_env, "CHAT_CONTEXT_WINDOW": str(window), "MEMORY_MAX_MESSAGES": "100"}
    paragraph = " ".join(["The quarterly report covers sales, hiring and the new office."] * 12)
    lines = [f"Note {n}: {paragraph}" for n in range(40)]
    result = run_chat(env, lines)
    assert result.returncode == 0, result.stderr
    sizes = [request_tokens(body) for body in main_requests(server)]
    turn_growth = sizes[1] - sizes[0]  # one user message and its reply
    compressed = [i for i in range(1, len(sizes)) if sizes[i] < sizes[i - 1]]
    assert compressed, f"the context was never compressed: {sizes}"
    first = compressed[0]
    # What this turn would have sent had reached the threshold (the agent's estimate and
    # the server's count differ by a few percent)...
    assert sizes[first - 1] + turn_growth > 0.65 * window, sizes
    # ...and what it sent instead, instructions and tool schemas included, is within 10%.
    assert sizes[first] <= 0.1 * window, sizes
    # No request past the threshold ever reached the model.
    assert max(sizes) <= 0.7 * window, sizes


def test_a_fact_survives_a_restart(model_env, server):
    first = run_chat(model_env, ["My sister's name is Yuna.", FILLERS[0]])
    assert first.returncode == 0, first.stderr
    conversation_id = first.stdout.split()[1]
    server.clear()
    second = run_chat(model_env, ["What is my sister's name?"], conversation_id)
    assert second.returncode == 0, second.stderr
    assert "Yuna" in json.dumps(main_requests(server)[-1], ensure_ascii=False)
