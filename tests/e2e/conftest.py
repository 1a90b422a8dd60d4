"""Browser tests: Debian's Chromium driven by Playwright against a real Daphne process."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client

from tests.conftest import require_service

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
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# Sync Playwright runs an event loop in this thread; Django's ORM calls from the test
# body are still plain sync calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _slow_offline_model() -> None:
    """Make the offline model stream slower in the server process (forked after this)."""
    from conversations import agent_service

    build = agent_service.build_agent_config
    if getattr(build, "slowed", False):
        return

    def slowed():
        return dataclasses.replace(build(), offline_chars_per_second=OFFLINE_CHARS_PER_SECOND)

    slowed.slowed = True
    agent_service.build_agent_config = slowed


def _use_database(name: str) -> None:
    """Point the forked server at the test database by its exact name."""
    settings.DATABASES["default"]["NAME"] = name
    connections["default"].settings_dict["NAME"] = name


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[str]:
    """Start Daphne (HTTP + websockets) in a forked process sharing the test database."""
    require_service(os.path.exists(CHROMIUM), f"Chromium at {CHROMIUM}")
    from channels.testing.live import make_application
    from daphne.testing import DaphneProcess
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        assert "memory" not in str(settings.DATABASES["default"]["NAME"]), "needs a file DB"
    _slow_offline_model()
    settings.CHECKPOINT_URL = (
        settings.CHECKPOINT_URL
        if str(settings.CHECKPOINT_URL).startswith("postgres")
        else str(tmp_path_factory.mktemp("ckpt") / "checkpoints.sqlite3")
    )
    with django_db_blocker.unblock():
        # A forked child must not inherit pooled PostgreSQL connections: both processes
        # would talk over the same sockets and corrupt each other's transactions.
        for connection in connections.all():
            connection.close()
            if hasattr(connection, "close_pool"):
                connection.close_pool()
        server = DaphneProcess(
            "localhost",
            partial(make_application, static_wrapper=ASGIStaticFilesHandler),
            setup=partial(_use_database, connections["default"].settings_dict["NAME"]),
        )
        server.start()
        while not server.ready.wait(timeout=1):
            if not server.is_alive():
                raise RuntimeError("Daphne did not start")
    try:
        yield f"http://localhost:{server.port.value}"
    finally:
        server.terminate()
        server.join()


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
    """Make browser contexts (closed after the test); pass a user to be logged in."""
    contexts = []

    def make(user=None, *, locale: str = "en-US", color_scheme: str = "light", **extra):
        context = browser.new_context(
            base_url=live_server_url,
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
            context.add_cookies(
                [{"name": cookie.key, "value": cookie.value, "url": live_server_url}]
            )
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

    monkeypatch.setattr(events, "_group_send", lambda group, event: None)
