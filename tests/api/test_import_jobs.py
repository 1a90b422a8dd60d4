"""A file over CHAT_IMPORT_INLINE_BYTES is not read in the request: 202 and a job, imported by
a task (a real `manage.py worker` on PostgreSQL; on SQLite where it was enqueued), then GET
/imports/{id} answers what the 201 would have; all or nothing, once, whatever kills the
worker midway. The threshold is read by the request alone: the worker needs only the files."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from accounts.tokens import create_api_token
from conversations.models import Conversation, Message
from jobs.management.commands.worker import uses_workers
from tests.conftest import database_url_for_subprocesses
from tests.support import workers
from transfers import import_jobs, job_rows
from transfers.models import ImportJob

from .conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURES = Path(__file__).parent.parent / "conversations" / "import_fixtures"
DAMAGED = (FIXTURES / "chatgpt_one_damaged.json").read_bytes()  # 4 conversations, 1 broken
TASK = "transfers.import_jobs.import_upload"


@pytest.fixture
def large(settings, tmp_path):
    """Files over 1 KB are large; uploads are stored under a scratch MEDIA_ROOT."""
    settings.CHAT_IMPORT_INLINE_BYTES = 1024
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings


@pytest.fixture
def finish(api, run_tasks):
    """Let the worker import what was asked for; return the job as GET answers it then."""

    def finished(job_id: str) -> dict:
        run_tasks()
        response = api.get(f"/imports/{job_id}")
        assert response.status_code == 200, response.content
        return response.json()

    return finished


def upload(api, data: bytes, name: str = "conversations.json"):
    """POST the file as a browser would: multipart, field `file`."""
    return api.client.post(
        "/api/v1/conversations/import",
        {"file": SimpleUploadedFile(name, data, content_type="application/octet-stream")},
        headers=api.headers,
    )


def stored_uploads(settings) -> list[Path]:
    return [p for p in Path(settings.MEDIA_ROOT, "imports").rglob("*") if p.is_file()]


def titles_of(user) -> list[str]:
    return sorted(Conversation.objects.filter(created_by=user).values_list("title", flat=True))


def chatgpt_export(count: int) -> bytes:
    """A ChatGPT export of `count` conversations (the fixture's two, titled apart)."""
    pair = json.loads((FIXTURES / "chatgpt_conversations.json").read_text())
    items = []
    for n in range(count):
        item = json.loads(json.dumps(pair[n % 2]))
        item["title"] = f"{item['title']} {n}"
        items.append(item)
    return json.dumps(items).encode()


def test_a_large_file_is_imported_by_the_worker_and_answers_what_the_201_would(
    api, bob_api, alice, bob, large, finish
):
    started = upload(api, DAMAGED)
    assert started.status_code == 202, started.content
    job = started.json()
    assert job["status"] == "pending" and job["items"] is None and job["skipped"] is None
    assert job["size_bytes"] == len(DAMAGED)
    if uses_workers():  # on SQLite the task ran where it was enqueued
        assert titles_of(alice) == []  # the request stored no conversation
        assert len(stored_uploads(large)) == 1
        assert DBTaskResult.objects.get(task_path=TASK).status == TaskResultStatus.READY
        assert api.get(f"/imports/{job['id']}").json()["status"] == "pending"

    done = finish(job["id"])
    assert done["status"] == "ready", done
    assert (done["imported_count"], done["skipped_count"]) == (3, 1)
    assert [c["title"] for c in done["items"]] == ["Packing list", "Kimchi", "Train times"]
    assert [(s["index"], s["title"]) for s in done["skipped"]] == [(1, "Broken entry")]
    assert done["finished_at"] and done["error"] is None and done["error_code"] is None
    # The same answer as the request gives a small file (Bob's, read inline).
    large.CHAT_IMPORT_INLINE_BYTES = len(DAMAGED)
    inline = upload(bob_api, DAMAGED)
    assert inline.status_code == 201
    assert inline.json()["skipped"] == done["skipped"]
    assert [c["title"] for c in inline.json()["items"]] == [c["title"] for c in done["items"]]
    # Every conversation opens, with its messages, as hers alone.
    page = Client()
    page.force_login(alice)
    for conversation in done["items"]:
        messages = api.get(f"/conversations/{conversation['id']}/messages").json()["items"]
        assert len(messages) == conversation["message_count"] > 0
        assert page.get(f"/conversations/{conversation['id']}/").status_code == 200
        assert bob_api.get(f"/conversations/{conversation['id']}").status_code == 404
    assert titles_of(alice) == ["Kimchi", "Packing list", "Train times"]
    # The upload is gone; the job's answer stays, for her alone.
    assert stored_uploads(large) == [] and not ImportJob.objects.get().file
    assert bob_api.get(f"/imports/{job['id']}").status_code == 404


def test_a_small_file_is_still_imported_in_the_request(api, alice, large):
    large.CHAT_IMPORT_INLINE_BYTES = len(DAMAGED)  # not larger: read inline
    response = upload(api, DAMAGED)
    assert response.status_code == 201, response.content
    assert [c["title"] for c in response.json()["items"]] == [
        "Packing list",
        "Kimchi",
        "Train times",
    ]
    assert not ImportJob.objects.exists() and not DBTaskResult.objects.exists()
    large.CHAT_IMPORT_INLINE_BYTES = len(DAMAGED) - 1
    assert upload(api, DAMAGED).status_code == 202


UNREADABLE = {
    "NUL bytes": b"\x00" * 5000,
    "10 MB of garbage": os.urandom(10 * 1024 * 1024),
    "none readable": b"[" + b'{"mapping": []},' * 200 + b'{"mapping": []}]',
}


def test_large_files_nothing_of_which_reads_end_failed_and_store_nothing(
    make_user, large, run_tasks
):
    # One person each (one import at a time a person), one worker run for them all.
    clients = {
        name: ApiClient(Client(), create_api_token(user=make_user(), name="t").secret)
        for name in UNREADABLE
    }
    jobs = {}
    for name, body in UNREADABLE.items():
        started = clients[name].post_raw("/conversations/import", body, "application/octet-stream")
        assert started.status_code == 202, (name, started.content)
        jobs[name] = started.json()["id"]
    run_tasks()
    for name, body in UNREADABLE.items():
        done = clients[name].get(f"/imports/{jobs[name]}").json()
        assert (done["status"], done["error_code"]) == ("failed", "invalid_import"), name
        assert done["items"] is None
        # In the words the 400 gives a small file of the same bytes.
        large.CHAT_IMPORT_INLINE_BYTES = len(body)
        refused = clients[name].post_raw("/conversations/import", body, "application/octet-stream")
        assert refused.status_code == 400, name
        assert done["error"] == refused.json()["error"]["message"], name
    assert not Conversation.objects.exists() and not Message.objects.exists()
    assert stored_uploads(large) == []


def test_a_conversation_with_nul_in_a_large_file_is_skipped_and_the_rest_imported(
    api, alice, large, finish
):
    data = json.loads((FIXTURES / "chatgpt_conversations.json").read_text())
    data[1]["mapping"]["u1"]["message"]["content"]["parts"] = ["a\u0000b"]
    started = upload(api, json.dumps(data).encode())
    assert started.status_code == 202
    done = finish(started.json()["id"])
    assert done["status"] == "ready"
    assert [c["title"] for c in done["items"]] == ["Dog names"]
    (skipped,) = done["skipped"]
    assert skipped["title"] == "자기소개" and skipped["reason"].startswith("messages.0.content")
    assert titles_of(alice) == ["Dog names"]


@pytest.mark.parametrize("job_id", ["not-an-id", "1" * 100, "0" * 32])
def test_a_malformed_or_unknown_id_is_not_found(api, job_id):
    response = api.get(f"/imports/{job_id}")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_one_import_at_a_time_and_a_dead_one_does_not_block(api, alice, large, finish):
    running = ImportJob(owner=alice, status=ImportJob.Status.RUNNING, size_bytes=len(DAMAGED))
    running.file.save("running.upload", ContentFile(DAMAGED), save=False)
    running.save()
    refused = upload(api, chatgpt_export(3))
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "conflict"
    assert ImportJob.objects.count() == 1 and len(stored_uploads(large)) == 1
    # Nobody worked on it for longer than STALE (its worker died and none took it up): it
    # reads as failed, its upload is deleted, and another may start.
    ImportJob.objects.filter(pk=running.pk).update(
        updated_at=timezone.now() - job_rows.STALE - timedelta(seconds=1)
    )
    stale = api.get(f"/imports/{running.pk}").json()
    assert (stale["status"], stale["error_code"]) == ("failed", "interrupted")
    assert stale["error"] == "The import was interrupted. Try again."
    assert stored_uploads(large) == []
    second = upload(api, chatgpt_export(3))
    assert second.status_code == 202
    # The first's task, when a worker comes to it after all, imports nothing: it was said
    # to have failed.
    import_jobs.import_upload.enqueue(str(running.pk), alice.pk)
    done = finish(second.json()["id"])
    assert done["status"] == "ready" and done["imported_count"] == 3
    assert api.get(f"/imports/{running.pk}").json()["status"] == "failed"
    assert titles_of(alice) == ["Dog names 0", "Dog names 2", "자기소개 1"]


def test_import_records_are_purged_a_day_after_unless_still_beating(api, alice, large, finish):
    job = upload(api, chatgpt_export(3)).json()
    assert finish(job["id"])["status"] == "ready"
    dead = ImportJob(owner=alice, status=ImportJob.Status.RUNNING, size_bytes=len(DAMAGED))
    dead.file.save("dead.upload", ContentFile(DAMAGED), save=False)
    dead.save()
    beating = ImportJob.objects.create(owner=alice, status=ImportJob.Status.RUNNING)
    assert import_jobs.purge_old_imports() == 0  # nothing is a day old yet
    later = timezone.now() + job_rows.KEEP + timedelta(minutes=1)
    # One job still beats then (a huge file, its worker alive): it is kept.
    ImportJob.objects.filter(pk=beating.pk).update(updated_at=later)
    assert import_jobs.purge_old_imports(now=later) == 2
    assert list(ImportJob.objects.values_list("pk", flat=True)) == [beating.pk]
    assert stored_uploads(large) == []  # the dead job's upload went with it
    assert api.get(f"/imports/{job['id']}").status_code == 404
    assert titles_of(alice) == ["Dog names 0", "Dog names 2", "자기소개 1"]  # imports stay


def test_a_task_run_again_after_its_end_imports_nothing_twice(api, alice, large, finish):
    job = upload(api, chatgpt_export(4)).json()
    assert finish(job["id"])["imported_count"] == 4
    # As a worker killed between the import's commit and recording the task's end would
    # leave it: the task runs once more.
    import_jobs.import_upload.enqueue(job["id"], alice.pk)
    again = finish(job["id"])
    assert again["status"] == "ready" and again["imported_count"] == 4
    assert Conversation.objects.filter(created_by=alice).count() == 4


def _importing_pids(database: str) -> set[int]:
    """Server processes of other connections inside a transaction that has stored messages."""
    with psycopg.connect(database, autocommit=True) as watcher:
        rows = watcher.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL"
            " AND query LIKE '%INSERT INTO \"conversations_message\"%'"
        ).fetchall()
    return {pid for (pid,) in rows}


def _wait(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


@pytest.mark.usefixtures("require_postgres")
def test_a_worker_killed_mid_import_leaves_nothing_and_another_imports_it_once(
    api, alice, large, subprocess_env
):
    count = 600
    job = upload(api, chatgpt_export(count)).json()
    env = subprocess_env | {
        "CHAT_MEDIA_DIR": str(large.MEDIA_ROOT),
        "CHAT_MAINTENANCE": "0",
        "CHAT_WORKER_BEAT_SECONDS": "0.5",
        "CHAT_WORKER_STALE_SECONDS": "2",
    }
    database = database_url_for_subprocesses()
    first = workers.start(env)
    try:
        # Killed once its transaction has stored messages of the file (none of them visible).
        _wait(lambda: _importing_pids(database), 60, "the worker storing the import")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    _wait(lambda: not _importing_pids(database), 30, "the killed import rolled back")
    assert titles_of(alice) == [] and not Message.objects.exists()
    assert ImportJob.objects.get().status == ImportJob.Status.RUNNING  # left so by the dead one
    task = DBTaskResult.objects.get(task_path=TASK)
    assert task.status == TaskResultStatus.RUNNING
    assert len(stored_uploads(large)) == 1  # kept for the run again

    second = workers.start(env)
    try:
        _wait(
            lambda: DBTaskResult.objects.get(task_path=TASK).status == TaskResultStatus.SUCCESSFUL,
            180,
            "the task run again to its end",
        )
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(20)
    assert len(DBTaskResult.objects.get(task_path=TASK).worker_ids) == 2  # taken up again
    done = api.get(f"/imports/{job['id']}").json()
    assert done["status"] == "ready" and done["imported_count"] == count
    assert len(done["items"]) == count
    assert Conversation.objects.filter(created_by=alice).count() == count  # each once
    assert len(set(titles_of(alice))) == count
    assert stored_uploads(large) == []
