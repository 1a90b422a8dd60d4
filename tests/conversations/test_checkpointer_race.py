"""The first replies of a freshly started process, all at once: one checkpoint pool for the
process, set up once, and every reply answered (issue 30: 8 of them took a process from 2 to
48 PostgreSQL connections, and setup() racing itself failed replies with UniqueViolation)."""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from agent import checkpoint
from conversations import services
from conversations.models import Message
from conversations.realtime.hub import aclose_hub
from conversations.replies import Ask, start_reply
from tests.conftest import database_url_for_subprocesses, require_service, uses_postgres

pytestmark = pytest.mark.django_db(transaction=True)

REPLIES = 10


def _admin_url(database: str = "postgres") -> str:
    return database_url_for_subprocesses().rsplit("/", 1)[0] + f"/{database}"


@pytest.fixture
def fresh_checkpoint_database(settings):
    """A database that has never held checkpoints, named in CHECKPOINT_URL, and a process
    that has not opened or set up a checkpointer yet."""
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")
    name = f"ckpt_race_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_admin_url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    settings.CHECKPOINT_URL = _admin_url(name)
    settings.OPENAI_API_KEY = None  # the built-in offline model answers
    settings.OFFLINE_MODEL_CHARS_PER_SECOND = 0
    checkpoint.forget_setup()
    yield name
    checkpoint.forget_setup()
    with psycopg.connect(_admin_url(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _connections_to(database: str) -> int:
    with psycopg.connect(_admin_url(), autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
        ).fetchone()
    return int(row[0])


async def _first_replies(user, conversations) -> list[Message | None]:
    started = await asyncio.gather(
        *(
            start_reply(user=user, ask=Ask.send(f"hello {n}"), conversation_id=c.id)
            for n, c in enumerate(conversations)
        )
    )
    return await asyncio.gather(*(s.assistant_message() for s in started))


async def test_concurrent_first_replies_share_one_pool_set_up_once(
    fresh_checkpoint_database, alice, caplog
):
    caplog.set_level(logging.WARNING)
    conversations = [
        await sync_to_async(services.create_conversation)(user=alice, title=f"Race {n}")
        for n in range(REPLIES)
    ]
    await checkpoint.close_checkpointers()  # a process that has opened none yet
    before = await sync_to_async(_connections_to)(fresh_checkpoint_database)
    try:
        replies = await _first_replies(alice, conversations)
        during = await sync_to_async(_connections_to)(fresh_checkpoint_database)
    finally:
        await aclose_hub()
        await checkpoint.close_checkpointers()
        await sync_to_async(connections.close_all)()

    assert before == 0
    assert during <= checkpoint.POOL_MAX_SIZE, during
    assert [r.finish_reason for r in replies if r is not None] == ["end_turn"] * REPLIES
    assert "UniqueViolation" not in caplog.text and "checkpoint_migrations" not in caplog.text


def test_processes_setting_up_the_same_database_at_once_do_not_collide(
    fresh_checkpoint_database, settings
):
    """Each thread is a process of its own (its own loop, pool and set-up memory)."""
    url = settings.CHECKPOINT_URL
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    async def open_and_close() -> None:
        saver = await checkpoint.open_checkpointer(url)
        await checkpoint.close_checkpointer(saver)

    def process() -> None:
        barrier.wait()
        checkpoint.forget_setup()  # as a fresh process: it has set up nothing
        try:
            asyncio.run(open_and_close())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=process) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
