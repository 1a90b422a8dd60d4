"""Fuzz the conversation socket with arbitrary frames (hypothesis).

For every frame (any JSON value, JSON-looking text, frames of known types with odd
fields, raw bytes): the socket answers with known frame types only, never closes (no
1011), stores nothing for a frame it refused, and still answers `ping` afterwards.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.tokens import create_api_token
from conversations import services
from conversations.models import Message
from tests.realtime.conftest import open_socket
from tests.support.fake_turn import FakeAgent

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = 150
SERVER_FRAMES = {
    "message.created",
    "conversation.updated",
    "generation.started",
    "thinking",
    "token",
    "sources",
    "generation.finished",
    "sync.state",
    "error",
    "pong",
}
KNOWN_TYPES = ["message.send", "generation.stop", "sync", "ping"]

strings = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\x00", "\ud800", "a\x00b", "x" * 40_000, "회의가", "\u202e"]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    strings,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(strings, inner, max_size=4),
    max_leaves=12,
)
typed_frames = st.builds(
    lambda kind, extra: {"type": kind, **extra},
    st.sampled_from([*KNOWN_TYPES, "dance", ""]) | st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(
        st.sampled_from(["content", "client_id", "after", "extra", "type"]), json_values, max_size=3
    ),
)


def _encode(value) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


frames = st.one_of(
    json_values.map(_encode),
    typed_frames.map(_encode),
    st.text(max_size=60),
    st.sampled_from(["[" * 50_000, '{"a":' * 30_000, "{", "x" * 300_000]),
    st.binary(max_size=40),
)


@pytest.fixture
def gated_agent(monkeypatch):
    """Replies that never finish while the test runs: only refused frames change nothing."""
    agent = FakeAgent(gate=asyncio.Event(), gate_after=0)
    monkeypatch.setattr("conversations.agent_service.astart_turn", agent)
    return agent


async def _answers_until_pong(comm) -> list[dict]:
    answers = []
    while True:
        output = await comm.receive_output(timeout=10)
        assert output["type"] == "websocket.send", f"the socket closed: {output}"
        frame = json.loads(output["text"])
        answers.append(frame)
        if frame["type"] == "pong":
            return answers


@given(batch=st.lists(frames, min_size=1, max_size=6))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
)
async def test_no_frame_breaks_the_socket_or_stores_what_it_refused(alice, gated_agent, batch):
    conversation = await sync_to_async(services.create_conversation)(user=alice, title="Fuzz")
    token = (await sync_to_async(create_api_token)(user=alice, name="fuzz")).secret
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    try:
        for frame in batch:
            if not frame:  # a frame has some content (the test client refuses empty ones)
                continue
            before = await Message.objects.filter(conversation=conversation).acount()
            if isinstance(frame, bytes):
                await comm.send_to(bytes_data=frame)
            else:
                await comm.send_to(text_data=frame)
            await comm.send_to(text_data='{"type": "ping"}')
            answers = await _answers_until_pong(comm)
            assert {a["type"] for a in answers} <= SERVER_FRAMES, answers
            after = await Message.objects.filter(conversation=conversation).acount()
            if any(a["type"] == "error" for a in answers):
                assert after == before, (frame[:200], answers)
            else:
                assert after <= before + 1  # at most the user's message of a valid send
    finally:
        await comm.disconnect()
        gated_agent.gate.set()
