"""Browser tests: Debian's Chromium driven by Playwright against a real Daphne process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tests.conftest import database_url_for_subprocesses, require_service
from tests.parallel import free_port
from tests.support import workers
from tests.support.daphne import stop, wait_for_port
from tests.support.fake_openai import FakeOpenAI
from tests.support.openai_replies import Reply

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
# The offline model streams at 400 characters/s; slower here so a reply lasts long
# enough to stop it, reload in the middle of it, and watch it from a second tab.
OFFLINE_CHARS_PER_SECOND = 60.0
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"

# Sync Playwright runs an event loop in this thread; Django's ORM calls from the test
# body are still plain sync calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


_free_port = free_port


@contextmanager
def serve_daphne(var: Path, database_url: str, **overrides: str) -> Iterator[str]:
    """Run Daphne (HTTP + websockets) as a real process sharing the test database, with a
    `manage.py worker` beside it for the background tasks (exports, embedding), as
    `bin/run` does (on SQLite the tasks run in the server and the worker exits at once).

    A subprocess, not a fork: a fork of this process would inherit executor and pool
    objects whose threads do not exist in the child, and hang on its first database call.
    """
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "CHAT_VAR_DIR": str(var),
        # One media folder for every server of the session: their workers share the test
        # database's task queue, so any of them may run a task about another's upload.
        "CHAT_MEDIA_DIR": str(var.parent / "media"),
        "CHECKPOINT_URL": database_url
        if database_url.startswith("postgres")
        else str(var / "checkpoints.sqlite3"),
        "OFFLINE_MODEL_CHARS_PER_SECOND": str(OFFLINE_CHARS_PER_SECOND),
        "DJANGO_DEBUG": "1",  # static files from the finders, no HTTPS redirect
        "DJANGO_ALLOWED_HOSTS": "localhost,127.0.0.1",
    }
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"):
        env.pop(name, None)
    env.update(overrides)
    port = _free_port()
    log = open(var / "daphne.log", "w")  # noqa: SIM115 - closed below
    worker_log = open(var / "worker.log", "w")  # noqa: SIM115 - closed below
    # Maintenance off: it would purge what the tests' fixtures date in the past.
    worker = workers.start(env | {"CHAT_MAINTENANCE": "0"}, "--if-needed", log=worker_log)
    server = subprocess.Popen(
        [sys.executable, "-m", "chatsite.serve", "-b", "127.0.0.1", "-p", str(port),
         "chatsite.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_for_port(port, server)
        yield f"http://localhost:{port}"
    finally:
        stop([server, worker])
        log.close()
        worker_log.close()


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[str]:
    """Daphne with the built-in offline model."""
    require_service(os.path.exists(CHROMIUM), f"Chromium at {CHROMIUM}")
    with django_db_blocker.unblock():
        database_url = database_url_for_subprocesses()
    with serve_daphne(tmp_path_factory.mktemp("server-var"), database_url) as url:
        yield url


@pytest.fixture(scope="module")
def model_server(django_db_setup, django_db_blocker, tmp_path_factory):
    """Daphne pointed at the fake OpenAI-compatible server, which serves two models.

    Yields (the site's URL, the fake server: its `requests` are what the site sent)."""
    require_service(os.path.exists(CHROMIUM), f"Chromium at {CHROMIUM}")
    with django_db_blocker.unblock():
        database_url = database_url_for_subprocesses()
    with (
        FakeOpenAI(models=["fake-small", "fake-large"]) as fake,
        serve_daphne(
            tmp_path_factory.mktemp("model-server-var"),
            database_url,
            OPENAI_API_KEY="test-key",
            OPENAI_BASE_URL=fake.base_url,
            CHAT_MODEL="fake-small",
            CHAT_MODELS="auto",
        ) as url,
    ):
        yield url, fake


@pytest.fixture(scope="session")
def browser(live_server_url):
    """One headless Chromium for the session (launched after the server is forked)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_context(browser, live_server_url):
    """Make browser contexts (closed after the test); pass a user to be logged in, and
    `base_url` for another server than the offline one."""
    contexts = []

    def make(user=None, *, locale: str = "en-US", color_scheme: str = "light", **extra):
        base_url = extra.pop("base_url", live_server_url)
        context = browser.new_context(
            base_url=base_url,
            locale=locale,
            color_scheme=color_scheme,
            viewport=extra.pop("viewport", {"width": 1280, "height": 800}),
            accept_downloads=True,
            **extra,
        )
        context.set_default_timeout(10_000)
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME]
            context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base_url}])
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page_errors():
    """Collect uncaught page errors and dialogs (an XSS would open one)."""
    return {"errors": [], "dialogs": []}


def watch(page, sink) -> None:
    """Record page errors and auto-dismiss dialogs into `sink`."""
    page.on("pageerror", lambda error: sink["errors"].append(str(error)))

    def on_dialog(dialog):
        sink["dialogs"].append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)


@pytest.fixture(autouse=True)
def quiet_test_process_events(monkeypatch):
    """Rows the test writes need no realtime events from this process (no sockets here).

    Sync Playwright keeps an event loop in this thread, where `async_to_sync` refuses to
    run; the server process (forked before) sends its own events as usual.
    """
    from conversations import events

    monkeypatch.setattr(events, "_send_from_thread", lambda frame, conversation, user: None)


@pytest.fixture
def slow_first_token(model_server):
    """The model takes 1.5 s before its first token (a CPU model reading the prompt)."""
    url, fake = model_server
    answer = fake.responder
    fake.responder = lambda body: Reply(text="Here is the answer.", delay=1.5)
    yield url
    fake.responder = answer


@pytest.fixture
def held_first_token(model_server):
    """The model sends nothing until the test lets it (`release()`): a CPU model still
    reading the prompt, however long a loaded machine takes to open the page."""
    url, fake = model_server
    answer, go = fake.responder, threading.Event()

    def held(body):
        go.wait(30)
        return Reply(text="Here is the answer.")

    fake.responder = held
    yield url, go.set
    go.set()
    fake.responder = answer
