"""Fixtures for the agent tests: the fake OpenAI server, checkpointers, a turn runner."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.checkpoint import close_checkpointer, open_checkpointer
from agent.config import AgentConfig
from tests.agent.helpers import memory_responder
from tests.support.fake_openai import FakeOpenAI
from tests.support.web_sites import SearXNG, Server, site_routes

POSTGRES_ADMIN_URL = os.environ.get(
    "AGENT_TEST_POSTGRES_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
# One scratch database per xdist worker: two workers creating the saver's tables at once race.
POSTGRES_TEST_DB = f"agent_test_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(memory_responder) as server:
        yield server


@pytest.fixture
def online_config(fake_openai: FakeOpenAI) -> AgentConfig:
    return AgentConfig(
        model="fake-model",
        openai_api_key="test-key",
        openai_base_url=fake_openai.base_url,
        max_retries=0,
        request_timeout=10,
    )


@pytest.fixture
def offline_config() -> AgentConfig:
    return AgentConfig(offline_chars_per_second=0)


@pytest.fixture
def sqlite_path(tmp_path: Path) -> str:
    return str(tmp_path / "var" / "checkpoints.sqlite3")


@pytest.fixture
async def saver(sqlite_path: str) -> AsyncIterator[Any]:
    checkpointer = await open_checkpointer(sqlite_path)
    yield checkpointer
    await close_checkpointer(checkpointer)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """Return a URL of a scratch PostgreSQL database (skip when there is none)."""
    import psycopg

    try:
        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=3) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (POSTGRES_TEST_DB,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{POSTGRES_TEST_DB}"')
    except psycopg.OperationalError as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{POSTGRES_TEST_DB}"


@pytest.fixture
async def pg_saver(postgres_url: str) -> AsyncIterator[Any]:
    checkpointer = await open_checkpointer(postgres_url)
    yield checkpointer
    await close_checkpointer(checkpointer)


# The web tools' servers (tests/support/web_sites.py): a small site on 127.0.0.1 and ::1,
# and a fake SearXNG.
@pytest.fixture
async def site() -> AsyncIterator[Server]:
    servers: dict[str, Server] = {}
    server = servers["site"] = await Server(site_routes(servers)).start("127.0.0.1")
    yield server
    await server.stop()


@pytest.fixture
async def site6() -> AsyncIterator[Server]:
    servers: dict[str, Server] = {}
    try:
        server = servers["site"] = await Server(site_routes(servers)).start("::1")
    except OSError:
        pytest.skip("no IPv6 loopback here")
    yield server
    await server.stop()


@pytest.fixture
async def searx() -> AsyncIterator[SearXNG]:
    server = await SearXNG().start()
    yield server
    await server.stop()
