"""The real agent against a fake OpenAI-compatible server, and a turn driven as a socket
would see it (shared by the memory, import and attachment tests of this folder)."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from agent.checkpoint import close_checkpointers
from conversations.models import Message
from conversations.realtime.hub import aclose_hub, get_hub
from conversations.replies import start_reply
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support.fake_openai import FakeOpenAI, forced_tool
from tests.support.sink import Sink


@pytest.fixture
async def model(settings, tmp_path):
    """The fake model server the app talks to (attachments under a scratch MEDIA_ROOT)."""
    settings.MEDIA_ROOT = tmp_path / "media"
    with FakeOpenAI(memory_responder) as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        yield server
    await aclose_hub()
    await close_checkpointers()
    await sync_to_async(connections.close_all)()


async def ask(user, conversation, **ask) -> tuple[Message, list[dict]]:
    """Start a reply (send by default) and return the stored reply and its frames."""
    hub, sink = get_hub(), Sink()
    await hub.join(conversation.id, sink)
    started = await start_reply(user=user, conversation_id=conversation.id, **ask)
    reply = await started.assistant_message()
    await hub.flushed(conversation.id)
    await hub.leave(conversation.id, sink)
    return reply, sink.frames


def sent_to_model(server: FakeOpenAI) -> str:
    """Return everything the last answering request (not a summary, not routing) held."""
    main = [b for b in server.requests if not forced_tool(b) and not is_summarizer_request(b)]
    return json.dumps(main[-1]["messages"], ensure_ascii=False)
