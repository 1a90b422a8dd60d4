"""The real agent against a fake OpenAI-compatible server, and a turn driven as a socket
would see it (shared by the memory, import and attachment tests of this folder)."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from agent.checkpoint import close_checkpointers
from conversations.realtime.hub import aclose_hub
from tests.agent.helpers import is_summarizer_request, memory_responder
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import forced_tool


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


def sent_to_model(server: FakeOpenAI) -> str:
    """Return everything the last answering request (not a summary, not routing) held."""
    main = [b for b in server.requests if not forced_tool(b) and not is_summarizer_request(b)]
    return json.dumps(main[-1]["messages"], ensure_ascii=False)
