"""Exports of all of a user's conversations: a zip of Markdown files, written by a task
after the request (SPEC: `POST /api/v1/exports`; `manage.py worker` on PostgreSQL, never the
web process that streams replies), kept `KEEP` for download.

One job a person at a time. The zip is written to a temporary file as `exports.iter_zip`
yields it (one conversation at a time: memory stays flat however many there are), then
handed to the storage. A worker killed while writing leaves the task to another worker,
which writes the zip again from the start (jobs/recovery.py); a job nobody writes any more
(no worker at all) stops sending its heartbeat, and after `STALE` it reads as failed and
another may start.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from django.core.files import File
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_tasks import task

from conversations.models import Conversation
from core import rls
from core.errors import Conflict, NotFound
from core.ids import parse_uuid
from core.user_turns import hold_user
from prompts import transfer as prompt_transfer

from .exports import iter_zip
from .job_rows import ACTIVE, HEARTBEAT_SECONDS, KEEP, fail_if_stale, purge
from .models import ExportJob

logger = logging.getLogger(__name__)


def start_export(*, user: Any, format: str, include_metadata: bool = False) -> ExportJob:
    """Queue an export of every conversation of `user` (not temporary ones); Conflict while
    one of theirs is still being written."""
    with transaction.atomic():
        hold_user(user.pk)
        active = ExportJob.objects.select_for_update().filter(owner_id=user.pk, status__in=ACTIVE)
        for job in active:
            if not _fail_if_stale(job):
                raise Conflict(_("An export of your conversations is already being written."))
        job = ExportJob.objects.create(
            owner_id=user.pk, format=format, include_metadata=include_metadata
        )
        transaction.on_commit(lambda: write_export.enqueue(str(job.pk), user.pk))
    return job


def zip_name(job: ExportJob) -> str:
    """The zip's name, stored and downloaded (storage may add a suffix to the stored one)."""
    return f"conversations-{timezone.localdate(job.created_at).isoformat()}.zip"


def get_export(*, user: Any, job_id: Any) -> ExportJob:
    """Return the user's export (NotFound for anyone else's); a job that stopped hearing
    from its process reads as failed."""
    pk = parse_uuid(job_id)
    job = ExportJob.objects.filter(pk=pk, owner_id=user.pk).first() if pk else None
    if job is None:
        raise NotFound(_("No such export."))
    _fail_if_stale(job)
    return job


def _fail_if_stale(job: ExportJob) -> bool:
    """Mark a pending or running job failed if its heartbeat stopped; say whether it did."""
    return fail_if_stale(job, error=_("The export was interrupted. Start it again."))


@task()
def write_export(job_id: str, user_id: int) -> None:
    """Write the job's zip and store it; whatever fails, the job ends failed, never stuck
    (a person starts it again: an export is not retried behind their back)."""
    try:
        with rls.as_user(user_id):
            _write(job_id, user_id)
    except Exception:
        logger.exception("export %s failed", job_id)
        with rls.as_user(user_id):
            ExportJob.objects.filter(pk=job_id).update(
                status=ExportJob.Status.FAILED,
                error=_("The export could not be written. Try again later."),
                finished_at=timezone.now(),
                updated_at=timezone.now(),
            )


def _write(job_id: Any, user_id: Any) -> None:
    job = ExportJob.objects.get(pk=job_id)
    ExportJob.objects.filter(pk=job_id).update(
        status=ExportJob.Status.RUNNING, updated_at=timezone.now()
    )
    counted = [0]
    conversations = Conversation.objects.filter(created_by_id=user_id, temporary=False).order_by(
        "created_at", "id"
    )

    def each() -> Iterator[Conversation]:
        for conversation in conversations.iterator(chunk_size=200):
            counted[0] += 1
            yield conversation

    beat = time.monotonic()
    with tempfile.TemporaryFile() as spool:
        # The person's prompts go with their conversations (read back on the Prompts page).
        prompts = prompt_transfer.export_file(user=job.owner)
        extras = [(prompt_transfer.FILENAME, prompts)] if prompts else []
        zipped = iter_zip(each(), "markdown", include_metadata=job.include_metadata, extras=extras)
        for chunk in zipped:
            spool.write(chunk)
            if time.monotonic() - beat > HEARTBEAT_SECONDS:
                ExportJob.objects.filter(pk=job_id).update(updated_at=timezone.now())
                beat = time.monotonic()
        size = spool.tell()
        spool.seek(0)
        job.file.save(zip_name(job), File(spool), save=False)
    ExportJob.objects.filter(pk=job_id).update(
        status=ExportJob.Status.READY,
        file=job.file.name,
        size_bytes=size,
        conversation_count=counted[0],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )


@rls.maintenance()  # every user's old exports
def purge_expired_exports(*, now: Any = None) -> int:
    """Delete exports asked for more than KEEP ago, their zips with them; return how many."""
    return purge(ExportJob.objects.filter(created_at__lt=(now or timezone.now()) - KEEP))
