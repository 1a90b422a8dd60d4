"""Shared fixtures: users, clients, and the rule that CI never skips a missing service."""

from __future__ import annotations

import os

import pytest
from django.conf import settings

from tests.parallel import check_browser_tests, make_scheduler

IN_CI = os.environ.get("CI", "").lower() == "true"


def pytest_report_header(config) -> list[str]:
    db = settings.DATABASES["default"]
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    cache = settings.CACHES["default"]["BACKEND"]
    return [
        f"database: {db['ENGINE'].rsplit('.', 1)[-1]} ({db.get('HOST') or db['NAME']})",
        f"channel layer: {layer}",
        f"cache: {cache}",
    ]


def pytest_configure(config) -> None:
    # A test's own fixtures and checks (`Conversation.objects.create(...)`) run as the
    # maintenance role; the code under test chooses its own scope (a request's user, a
    # socket's, a run's), as in production. Servers the tests start keep the default: none.
    from core import rls

    rls.default_scope = rls.MAINTENANCE


def pytest_collection_modifyitems(config, items) -> None:
    """Run browser tests last: sync Playwright keeps an event loop running in the main
    thread for the rest of the session, where async tests can no longer start their own."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
    check_browser_tests(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return make_scheduler(config, log)


def uses_postgres() -> bool:
    return settings.DATABASES["default"]["ENGINE"].endswith("postgresql")


def require_service(available: bool, what: str) -> None:
    """Skip when a service is missing on a laptop; fail under CI=true."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"{what} is required under CI=true but is not available")
    pytest.skip(f"{what} not available")


@pytest.fixture(scope="session", autouse=True)
def close_database_pools(django_db_setup, django_db_blocker):
    """Keep the agent's checkpoints in the test database, as production keeps them in the
    app's; close pooled connections before the test database is dropped (PostgreSQL
    refuses to drop a database other sessions still use)."""
    from django.conf import settings

    with django_db_blocker.unblock():
        url = database_url_for_subprocesses()
    if url.startswith("postgres"):
        settings.CHECKPOINT_URL = url
    yield
    import contextlib
    import threading

    from django.db import connections

    from core import db_async

    with django_db_blocker.unblock():
        # The async DB threads each hold their own connection: close them on those threads
        # (a barrier puts one close on every thread), or the drop waits on "other users".
        barrier = threading.Barrier(db_async.DB_THREADS)

        def close_on_thread() -> None:
            connections.close_all()
            barrier.wait(timeout=5)

        futures = [db_async._executor.submit(close_on_thread) for _ in range(db_async.DB_THREADS)]
        for future in futures:
            with contextlib.suppress(threading.BrokenBarrierError):
                future.result(timeout=10)
        for connection in connections.all():
            connection.close()
            if hasattr(connection, "close_pool"):
                connection.close_pool()
    if url.startswith("postgres"):
        _end_leftover_connections(url)


def _end_leftover_connections(url: str) -> None:
    """End the connections to the test database that tests left open (a checkpointer
    belongs to the event loop that opened it, and some loops are gone; a child process
    may still be exiting), and wait until they are gone, so that it can be dropped."""
    import time

    import psycopg

    admin = url.rsplit("/", 1)[0] + "/postgres"
    name = url.rsplit("/", 1)[1]
    others = "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
    with psycopg.connect(admin, autocommit=True) as conn:
        for _ in range(50):
            conn.execute(f"SELECT pg_terminate_backend(pid) {others}", (name,))
            time.sleep(0.1)
            if not conn.execute(f"SELECT count(*) {others}", (name,)).fetchone()[0]:
                return


@pytest.fixture
def require_postgres() -> None:
    require_service(uses_postgres(), "PostgreSQL (set DATABASE_URL)")


@pytest.fixture
def make_user(django_user_model):
    counter = {"n": 0}

    def make(username: str | None = None, **extra):
        counter["n"] += 1
        name = username or f"user{counter['n']}"
        return django_user_model.objects.create_user(
            username=name, password="pw-for-tests-123", **extra
        )

    return make


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob")


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def bob_client(bob):
    from django.test import Client

    c = Client()
    c.force_login(bob)
    return c


@pytest.fixture(autouse=True)
def default_language():
    """Start and end every test in the site's language: a test that activates Korean on
    its thread must not leave it to the next test that runs there."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Real hashing costs ~0.3 s per login; tests measure behaviour, not key stretching.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def embed_before_answering(settings):
    # An upload's chunks are embedded when its transaction commits, on the test's own
    # thread: no thread outlives the test, and what a test reads next is settled.
    settings.KNOWLEDGE_EMBED_IN_BACKGROUND = False


@pytest.fixture(autouse=True)
def fresh_model_capabilities():
    # What a fake server refused in one test must not carry over to the next.
    from agent.capabilities import forget_capabilities
    from agent.windows import forget_windows

    forget_capabilities()
    forget_windows()
    yield
    forget_capabilities()
    forget_windows()


def database_url_for_subprocesses() -> str:
    """Return a DATABASE_URL naming the test database, for servers/commands the test starts."""
    from django.db import connection

    params = connection.settings_dict
    if connection.vendor == "postgresql":
        user = params.get("USER") or "postgres"
        host = params.get("HOST") or "127.0.0.1"
        port = params.get("PORT") or 5432
        return f"postgres://{user}@{host}:{port}/{params['NAME']}"
    return f"sqlite:///{params['NAME']}"


@pytest.fixture
def subprocess_env(tmp_path) -> dict[str, str]:
    """Environment for a child process that shares this test's database (transactional tests)."""
    url = database_url_for_subprocesses()
    env = {**os.environ, "DATABASE_URL": url, "CHAT_VAR_DIR": str(tmp_path / "var")}
    env["CHECKPOINT_URL"] = url if url.startswith("postgres") else str(tmp_path / "ckpt.sqlite3")
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    return env


@pytest.fixture
def run_tasks(subprocess_env, settings):
    """Run the tasks enqueued so far as the site does: a real `manage.py worker` on
    PostgreSQL (to the end of those ready, sharing this test's files); on SQLite they ran
    where they were enqueued (the immediate backend), so there is nothing left to run."""
    from jobs.management.commands.worker import uses_workers
    from tests.support import workers

    def run() -> None:
        if uses_workers():
            media = {"CHAT_MEDIA_DIR": str(settings.MEDIA_ROOT), "CHAT_MAINTENANCE": "0"}
            workers.run_batch(subprocess_env | media)

    return run
