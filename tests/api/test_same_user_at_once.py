"""One user's identical requests sent at the same instant (a double click, a script's retry
burst, two tabs): a rule read before a write holds for all of them together. An attack
sweep found three that did not: a prompts file imported twice at once answered 500 (the
same command inserted twice); twenty exports asked at once all started, though one may
run at a time; the same memory sent at once was saved two or three times.

In one test process the requests rarely overlap by chance (the race showed against a real
server), so each test holds the write that follows the rule's read until the whole burst
has come to it (`slowed`). Without the per-user turn each test fails; with it they take
turns."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import pytest
from django.test import Client

from memories import services as memories
from memories import store as memory_store
from prompts import services as prompt_services
from prompts.models import MAX_PROMPTS, Prompt
from tests.support.at_once import at_once
from transfers.models import ExportJob

from .conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

AT_ONCE = 10


def burst(token: str, method: str, path: str, bodies: list[Any]) -> list[Any]:
    """Send each body at the same instant, each from its own client and connection."""

    def send(body: Any):
        return getattr(ApiClient(Client(), token), method)(path, body)

    outcomes = at_once(send, bodies)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return outcomes


def slowed(monkeypatch, owner: Any, name: str) -> None:
    """Hold `owner.name` until every request of the burst has come to it, or 2 s passed:
    the write after a rule's read comes late. Without the per-user turn all of them get
    there, having each read the rule before any wrote; with it one comes at a time."""
    real = getattr(owner, name)
    arrived = threading.Barrier(AT_ONCE)

    def late(*args: Any, **kwargs: Any) -> Any:
        with contextlib.suppress(threading.BrokenBarrierError):
            arrived.wait(timeout=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, late)


@pytest.fixture
def token(api) -> str:
    return api.headers["Authorization"].removeprefix("Bearer ")


def test_a_prompts_file_imported_again_and_again_at_once_adds_each_prompt_once(
    token, alice, monkeypatch
):
    slowed(monkeypatch, Prompt.objects, "bulk_create")
    file = {
        "format": "chat-prompts",
        "version": 1,
        "prompts": [{"command": "tldr", "title": "Short", "content": "In one line: {{text}}"}],
    }
    answers = burst(token, "post", "/prompts/import", [file] * AT_ONCE)
    assert [a.status_code for a in answers] == [200] * AT_ONCE, [a.content for a in answers]
    bodies = [a.json() for a in answers]
    assert sorted(b["created"] for b in bodies) == [[]] * (AT_ONCE - 1) + [["tldr"]]
    assert Prompt.objects.filter(owner=alice).count() == 1


def test_prompts_sent_at_once_at_the_cap_stop_at_the_cap(token, alice, monkeypatch):
    Prompt.objects.bulk_create(
        Prompt(owner=alice, command=f"p{n}", title="t", content="c") for n in range(MAX_PROMPTS - 1)
    )
    slowed(monkeypatch, prompt_services, "_save")
    bodies = [{"command": f"new{n}", "title": "t", "content": "c"} for n in range(AT_ONCE)]
    answers = burst(token, "post", "/prompts", bodies)
    assert sorted(a.status_code for a in answers) == [201] + [422] * (AT_ONCE - 1)
    assert Prompt.objects.filter(owner=alice).count() == MAX_PROMPTS


def test_exports_asked_at_once_start_one(token, alice, bob_api, monkeypatch, require_postgres):
    slowed(monkeypatch, ExportJob.objects, "create")
    # On PostgreSQL an export waits for a worker, so all ten arrive while it is pending.
    answers = burst(token, "post", "/exports", [{"format": "markdown-zip"}] * AT_ONCE)
    codes = sorted(a.status_code for a in answers)
    assert codes == [202] + [409] * (AT_ONCE - 1), [a.content for a in answers]
    assert ExportJob.objects.filter(owner=alice).count() == 1
    # Someone else's export does not wait for alice's.
    assert bob_api.post("/exports", {"format": "markdown-zip"}).status_code == 202


def test_the_same_memory_sent_at_once_is_saved_once(token, alice, monkeypatch):
    for kind in (memory_store.DjangoPostgresStore, memory_store.DjangoSqliteStore):
        slowed(monkeypatch, kind, "put")
    answers = burst(token, "post", "/memories", [{"text": "My dog is called Rex."}] * AT_ONCE)
    assert {a.status_code for a in answers} == {201}
    assert len({a.json()["id"] for a in answers}) == 1
    assert [m["text"] for m in memories.list_memories(user_id=alice.pk)] == [
        "My dog is called Rex."
    ]
