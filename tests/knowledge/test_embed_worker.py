"""An upload's chunks are embedded by `manage.py worker` (Django's tasks framework on
PostgreSQL), not by the web process: the page says how far it is, a worker killed with
`kill -9` mid-document loses nothing and embeds nothing twice, and a failing embedder is
tried again after a backoff."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.test import Client
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from knowledge import services
from knowledge.models import DocumentChunk
from knowledge.selectors import indexed_count
from tests.support import workers
from tests.support.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("require_postgres")]

TASK = "knowledge.tasks.embed_document"


@pytest.fixture
def embedder(settings, subprocess_env):
    """The fake server's /embeddings, for this process and the workers it starts."""
    with FakeOpenAI() as fake:
        settings.KNOWLEDGE_EMBED_IN_BACKGROUND = True
        settings.EMBEDDING_MODEL = "fake-embed"
        settings.EMBEDDING_BASE_URL = fake.base_url
        settings.EMBEDDING_API_KEY = "test-key"
        subprocess_env.update(
            EMBEDDING_MODEL="fake-embed",
            EMBEDDING_BASE_URL=fake.base_url,
            EMBEDDING_API_KEY="test-key",
            KNOWLEDGE_EMBED_IN_BACKGROUND="1",
            CHAT_WORKER_BEAT_SECONDS="0.5",
            CHAT_WORKER_STALE_SECONDS="2",
        )
        yield fake


def _document(user, sections: int):
    text = "\n\n".join(
        f"# Part {n}\n\n" + f"Paragraph {n} about harbour number {n} and its ships. " * 40
        for n in range(sections)
    )
    return services.upload_document(user=user, filename="harbours.md", data=text.encode())


def _wait(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def _indexed(document) -> int:
    return DocumentChunk.objects.filter(
        document=document, embedding_model="remote:fake-embed"
    ).count()


def test_an_upload_is_embedded_by_the_worker_and_the_page_shows_how_far(
    embedder, alice, subprocess_env
):
    document = _document(alice, 12)
    total = document.chunk_count
    assert total >= 12
    queued = DBTaskResult.objects.get(task_path=TASK)
    assert queued.status == TaskResultStatus.READY  # the web process embedded nothing
    assert indexed_count(document) == 0 and embedder.embeddings.texts == {}
    client = Client()
    client.force_login(alice)
    assert "Indexing… 0%" in client.get("/documents/").content.decode()

    workers.run_batch(subprocess_env)
    result = DBTaskResult.objects.get(task_path=TASK)
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == total
    assert _indexed(document) == total
    assert "Indexing" not in client.get("/documents/").content.decode()
    assert client.get("/api/v1/documents").json()["items"][0]["indexed_chunks"] == total


def test_a_worker_killed_mid_document_loses_nothing_and_embeds_nothing_twice(
    embedder, alice, subprocess_env
):
    embedder.embeddings.delay = 0.25  # a batch of 256 chunks: 4 requests, ~1 s
    document = _document(alice, 300)
    total = document.chunk_count
    assert total > 512  # three transactions at least
    first = workers.start(subprocess_env)
    try:
        _wait(lambda: _indexed(document) >= 256, 60, "the first batch stored")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    before = _indexed(document)
    assert 0 < before < total
    task = DBTaskResult.objects.get(task_path=TASK)
    assert task.status == TaskResultStatus.RUNNING  # left so by the dead worker

    second = workers.start(subprocess_env)
    try:
        _wait(
            lambda: DBTaskResult.objects.get(task_path=TASK).status == TaskResultStatus.SUCCESSFUL,
            90,
            "the task run again to its end",
        )
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(20)
    task = DBTaskResult.objects.get(task_path=TASK)
    assert len(task.worker_ids) == 2  # claimed again by the second worker
    assert task.return_value == total - before  # only what was still pending
    assert _indexed(document) == total
    # At most the one batch in flight when it was killed was asked about again.
    asked_twice = sum(n - 1 for n in embedder.embeddings.texts.values() if n > 1)
    assert asked_twice <= 256


def test_a_failing_embedder_is_tried_again_after_a_backoff(embedder, alice, subprocess_env):
    document = _document(alice, 3)
    subprocess_env["EMBEDDING_BASE_URL"] = "http://127.0.0.1:9/v1"  # nothing listens
    workers.run_batch(subprocess_env)
    runs = list(DBTaskResult.objects.filter(task_path=TASK).order_by("enqueued_at"))
    assert len(runs) == 2  # the first, and the one enqueued after its failure
    assert runs[0].status == TaskResultStatus.SUCCESSFUL and runs[0].return_value == {"retried": 1}
    assert runs[1].status == TaskResultStatus.READY and runs[1].args_kwargs["kwargs"] == {
        "attempt": 2
    }
    assert runs[1].run_after.timestamp() - time.time() > 5  # after its backoff
    assert _indexed(document) == 0
    # The embedder back: the retry, once due, embeds the document.
    DBTaskResult.objects.filter(pk=runs[1].pk).update(run_after=runs[0].enqueued_at)
    subprocess_env["EMBEDDING_BASE_URL"] = embedder.base_url
    workers.run_batch(subprocess_env)
    assert _indexed(document) == document.chunk_count


def test_the_worker_runs_the_maintenance_cron_used_to_run_once_per_period(
    alice, subprocess_env, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from conversations import services as conversation_services
    from conversations.models import Conversation
    from jobs.models import ScheduledRun

    settings.CHAT_RETENTION_ARCHIVED_DAYS = 30
    subprocess_env["CHAT_RETENTION_ARCHIVED_DAYS"] = "30"
    old = conversation_services.create_conversation(user=alice, title="Long archived")
    recent = conversation_services.create_conversation(user=alice, title="Archived yesterday")
    now = timezone.now()
    Conversation.objects.filter(pk=old.pk).update(
        status="archived", archived_at=now - timedelta(days=40)
    )
    Conversation.objects.filter(pk=recent.pk).update(
        status="archived", archived_at=now - timedelta(days=1)
    )
    workers.run_batch(subprocess_env)
    ran = DBTaskResult.objects.filter(task_path="jobs.schedule.run_maintenance")
    assert sorted(r.args_kwargs["args"][0] for r in ran) == [
        "prune_checkpoints",
        "purge_archived",
        "purge_exports",
        "purge_imports",
    ]
    assert all(r.status == TaskResultStatus.SUCCESSFUL for r in ran)
    assert not Conversation.objects.filter(pk=old.pk).exists()
    assert Conversation.objects.filter(pk=recent.pk).exists()
    assert ScheduledRun.objects.get(pk="purge_archived").due_at > timezone.now()
    # Run again within the hour: nothing is due, nothing runs twice.
    workers.run_batch(subprocess_env)
    assert DBTaskResult.objects.filter(task_path="jobs.schedule.run_maintenance").count() == 4
