"""POST /exports → a zip of every conversation as Markdown, written by a task (a real
`manage.py worker` on PostgreSQL); GET /exports/{id} until ready; one at a time; a day
later it is gone."""

from __future__ import annotations

import io
import json
import os
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone

from conversations import services
from prompts.models import Prompt
from transfers import export_jobs, job_rows
from transfers.models import ExportJob

from .conftest import make_conversation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finish(api, run_tasks):
    """Let the worker write the exports asked for; return the job's state after it."""

    def finished(job_id: str) -> dict:
        run_tasks()
        return api.get(f"/exports/{job_id}").json()

    return finished


def test_all_conversations_come_back_as_markdown_files_in_a_zip(api, bob_api, alice, bob, finish):
    make_conversation(alice, title="부산 여행", contents=["계획을 세워줘", "좋아요 **계획**"])
    make_conversation(alice, title="Lisbon", contents=["Plan three days", "Day one…"])
    services.create_conversation(user=alice, title="Secret temp", temporary=True)
    make_conversation(bob, title="Bob's own", contents=["not hers"])
    Prompt.objects.create(owner=alice, command="plan", title="여행 계획", content="{{city}} 3일")
    Prompt.objects.create(owner=bob, command="bobs", title="Bob's", content="not hers")
    started = api.post("/exports", {"format": "markdown-zip"})
    assert started.status_code == 202, started.content
    job = started.json()
    assert job["status"] in ("pending", "running") and job["download_url"] is None
    done = finish(job["id"])
    assert done["status"] == "ready", done
    assert done["conversation_count"] == 2
    assert done["download_url"] == f"/api/v1/exports/{job['id']}/download"
    response = api.get(f"/exports/{job['id']}/download")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    data = b"".join(response.streaming_content)
    assert len(data) == done["size_bytes"]
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = sorted(n for n in archive.namelist() if n != "prompts.json")
    assert len(names) == 2 and all(n.endswith(".md") for n in names)
    # Her prompts go with them, as the Prompts page's Export writes them (and reads back).
    assert json.loads(archive.read("prompts.json")) == api.get("/prompts/export").json()
    texts = "\n".join(archive.read(n).decode() for n in names)
    assert "# 부산 여행" in texts and "좋아요 **계획**" in texts and "# Lisbon" in texts
    assert "Secret temp" not in texts and "Bob's own" not in texts
    # A second export the same day is stored beside the first (storage adds a suffix to
    # its file) and still downloads under the day's name, as the first does.
    day = timezone.localdate().isoformat()
    again = finish(api.post("/exports", {"format": "markdown-zip"}).json()["id"])
    names = [
        api.get(f"/exports/{j}/download")["Content-Disposition"] for j in (job["id"], again["id"])
    ]
    assert names == [f'attachment; filename="conversations-{day}.zip"'] * 2
    assert not ExportJob.objects.get(pk=again["id"]).file.name.endswith(f"{day}.zip")
    # Bob sees nothing of it.
    assert bob_api.get(f"/exports/{job['id']}").status_code == 404
    assert bob_api.get(f"/exports/{job['id']}/download").status_code == 404


def test_one_export_at_a_time_and_a_dead_one_does_not_block(api, alice, finish):
    running = ExportJob.objects.create(
        owner=alice, format="markdown-zip", status=ExportJob.Status.RUNNING
    )
    refused = api.post("/exports", {"format": "markdown-zip"})
    assert refused.status_code == 409
    assert ExportJob.objects.count() == 1
    # Its process died: no heartbeat for longer than STALE.
    ExportJob.objects.filter(pk=running.pk).update(
        updated_at=timezone.now() - job_rows.STALE - timedelta(seconds=1)
    )
    assert api.get(f"/exports/{running.pk}").json()["status"] == "failed"
    started = api.post("/exports", {"format": "markdown-zip"})
    assert started.status_code == 202
    assert finish(started.json()["id"])["status"] == "ready"  # no conversations: an empty zip


def test_a_failing_export_ends_failed_with_a_reason(api, alice, finish, settings, tmp_path):
    make_conversation(alice, contents=["a"])
    # Where the zip goes cannot hold files: a file stands where the folder should be.
    blocked = tmp_path / "media"
    blocked.write_text("not a folder")
    settings.MEDIA_ROOT = str(blocked)
    job = api.post("/exports", {"format": "markdown-zip"}).json()
    done = finish(job["id"])
    assert done["status"] == "failed"
    assert done["error"] and "Errno" not in done["error"]  # in words for people
    assert api.get(f"/exports/{job['id']}/download").status_code == 404
    assert api.post("/exports", {"format": "markdown-zip"}).status_code == 202  # not stuck


@pytest.mark.parametrize(
    "body", [{}, {"format": "pdf-zip"}, {"format": "markdown-zip", "colour": 1}, {"format": 3}]
)
def test_bad_export_requests_are_422_and_start_nothing(api, body):
    assert api.post("/exports", body).status_code == 422
    assert not ExportJob.objects.exists()
    assert api.get("/exports/not-an-id").status_code == 404


def test_exports_older_than_a_day_are_purged_with_their_zip(api, alice, finish):
    job = api.post("/exports", {"format": "markdown-zip"}).json()
    assert finish(job["id"])["status"] == "ready"
    stored = ExportJob.objects.get()
    path = stored.file.path
    assert export_jobs.purge_expired_exports() == 0
    later = timezone.now() + job_rows.KEEP + timedelta(minutes=1)
    assert export_jobs.purge_expired_exports(now=later) == 1
    assert not ExportJob.objects.exists()
    assert not os.path.exists(path)
    assert api.get(f"/exports/{job['id']}").status_code == 404
