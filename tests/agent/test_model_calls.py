"""Calls to the model that are not streamed (titles, conversation summaries): what they
answer is made storable where it enters, and a silent server is given up on within one
request timeout, not request_timeout × (retries + 1)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agent.config import AgentConfig
from agent.digest import summarize_conversation
from agent.titles import write_title
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply


@pytest.fixture
def server():
    fake = FakeOpenAI(lambda body: Reply(text="Main points\n- a trip\x00 to 부산\ud800"))
    fake.title_responder = lambda body: "Trip\x00 plans\ud800"
    fake.start()
    yield fake
    fake.stop()


def _config(server, **extra) -> AgentConfig:
    return AgentConfig(openai_api_key="sk-test", openai_base_url=server.base_url, **extra)


def test_a_summary_and_a_title_with_nul_and_lone_surrogates_come_back_storable(server):
    turns = [("user", "We plan a trip to Busan"), ("assistant", "Where to stay?")]
    digest = asyncio.run(summarize_conversation(_config(server), turns, max_words=50))
    title = asyncio.run(write_title(_config(server), question="a trip?", answer="Busan"))
    text = str(digest)
    assert "\x00" not in text and "\ud800" not in text and "부산" in text
    assert title and "\x00" not in title and "\ud800" not in title


def test_a_silent_server_fails_a_summary_within_one_request_timeout(server):
    server.responder = lambda body: Reply(hang=True)
    config = _config(server, request_timeout=0.5, max_retries=2)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        asyncio.run(summarize_conversation(config, [("user", "hello there")], max_words=50))
    assert time.monotonic() - started < 1.5  # not 3 tries × 0.5 s


def test_a_rolling_summary_sends_the_summary_so_far_and_only_what_came_since(server):
    seen = []
    server.responder = lambda body: seen.append(body) or Reply(text="## Main points\n- Busan, KTX")
    previous = "## Main points\n- A trip to Busan\n\n## Decisions\n- (none)"
    turns = [("user", "We take the KTX."), ("assistant", "Booked.")]
    digest = asyncio.run(
        summarize_conversation(_config(server), turns, max_words=50, previous=previous)
    )
    system, request = (m["content"] for m in seen[0]["messages"])
    assert "summary so far comes first" in system
    assert request.startswith("Summary so far:\n" + previous)
    assert request.endswith("The conversation since:\nuser: We take the KTX.\nassistant: Booked.")
    assert digest["main_points"] == ["Busan, KTX"]
