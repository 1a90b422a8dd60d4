"""What the server says to a person reaches them in their language: an API error (the
toast), a socket's `error` frame, and the terminal `chat` command. The language is the
page's: the language cookie, else Accept-Language (conversations/realtime/auth.py)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from accounts.tokens import create_api_token
from conversations.models import Message
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply

from .conftest import make_conversation, open_socket, receive_until

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
HANGUL = re.compile("[가-힣]")


async def _busy_error(alice, fake_agent, headers) -> dict:
    """Send twice on one socket while the first reply is held; return the second's error."""
    fake_agent.gate = asyncio.Event()
    conversation = await make_conversation(alice)
    token = (await sync_to_async(create_api_token)(user=alice, name="ws")).secret
    comm = open_socket(conversation.id, token=token, headers=headers)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "message.send", "content": "first"})
    await receive_until(comm, "generation.started")
    await comm.send_json_to({"type": "message.send", "content": "second"})
    error = (await receive_until(comm, "error"))[-1]
    fake_agent.gate.set()
    await receive_until(comm, "generation.finished")
    await comm.disconnect()
    return error


async def test_a_socket_error_is_in_the_language_the_client_reads(alice, fake_agent):
    korean = await _busy_error(alice, fake_agent, [(b"accept-language", b"ko-KR,ko;q=0.9")])
    english = await _busy_error(alice, fake_agent, [(b"accept-language", b"en-US")])
    assert korean["code"] == english["code"] == "busy"
    assert "already running" in english["detail"]
    assert HANGUL.search(korean["detail"]), korean["detail"]


async def test_a_browsers_language_cookie_wins_over_accept_language(alice, fake_agent):
    cookie = (b"cookie", b"theme=dark; django_language=ko")
    error = await _busy_error(alice, fake_agent, [cookie, (b"accept-language", b"en")])
    assert HANGUL.search(error["detail"]), error["detail"]


async def test_an_api_error_is_in_the_requests_language(alice, fake_agent):
    """The toast a person sees when deleting a message a reply is being written under."""
    fake_agent.gate = asyncio.Event()
    conversation = await make_conversation(alice)
    token = (await sync_to_async(create_api_token)(user=alice, name="api")).secret
    comm = open_socket(conversation.id, token=token)
    assert (await comm.connect())[0]
    await comm.send_json_to({"type": "message.send", "content": "question"})
    await receive_until(comm, "generation.started")
    question = await Message.objects.filter(conversation_id=conversation.id).aget()
    client = AsyncClient()
    answers = {}
    for language in ("en", "ko"):
        response = await client.delete(
            f"/api/v1/messages/{question.pk}",
            headers={"Authorization": f"Bearer {token}", "Accept-Language": language},
        )
        assert response.status_code == 409, response.content
        answers[language] = response.json()["error"]["message"]
    fake_agent.gate.set()
    await receive_until(comm, "generation.finished")
    await comm.disconnect()
    assert "stop it first" in answers["en"]
    assert HANGUL.search(answers["ko"]) and "stop it first" not in answers["ko"]
    assert await Message.objects.filter(pk=question.pk).aexists()  # nothing was deleted


def test_the_terminal_chat_speaks_the_language_asked_for(subprocess_env, alice):
    def chat(*extra: str, user: str = "alice") -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", "chat", "--user", user, *extra],
            input="Hello?\n",
            cwd=ROOT,
            env={**env, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": server.base_url},
            capture_output=True,
            text=True,
            timeout=120,
        )

    env = dict(subprocess_env)
    with FakeOpenAI(lambda body: Reply(status=400, error_message="bad request")) as server:
        unknown = chat("--language", "ko", user="nobody")
        assert unknown.returncode != 0 and HANGUL.search(unknown.stderr), unknown.stderr
        failed_ko = chat("--language", "ko")
        failed_en = chat("--language", "en")
    assert failed_ko.returncode == 0, failed_ko.stderr
    assert "[The reply failed.]" in failed_en.stderr or "failed" in failed_en.stderr.lower()
    last_ko = failed_ko.stderr.strip().splitlines()[-1]
    assert last_ko.startswith("[") and HANGUL.search(last_ko), failed_ko.stderr
