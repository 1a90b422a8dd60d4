"""Imports of files too large to read in the request (SPEC: `POST /api/v1/conversations/import`
over `CHAT_IMPORT_INLINE_BYTES` → 202, then `GET /api/v1/imports/{id}`): the upload is stored
and a task reads it (`manage.py worker` on PostgreSQL, never the web process that streams
replies); the stored upload is deleted when the job ends.

The whole file is imported in one transaction, which also marks the job ready: a worker
killed mid-import has stored nothing, and the task run again by another worker
(jobs/recovery.py) imports the file from the start; a run that finds its job ended (ready,
failed, or failed as stale meanwhile) imports nothing. While it runs, a thread beats on its
own connection (the import's transaction shows nothing until it commits); a job that stopped
beating for `STALE` reads as failed, and another may start. One job a person at a time.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import IO, Any

from django.core.files import File
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_tasks import task

from conversations import selectors
from conversations.models import Conversation
from core import rls
from core.errors import Conflict, NotFound, ServiceError
from core.ids import parse_uuid
from core.user_turns import hold_user

from . import imports
from .job_rows import ACTIVE, HEARTBEAT_SECONDS, KEEP, fail_if_stale, purge
from .models import ImportJob

logger = logging.getLogger(__name__)

READ_BACK = 500  # ids a query, when the new conversations are read back


class _Ended(Exception):
    """The job ended while this run was importing (another run, or failed as stale)."""


def start_import(*, user: Any, source: IO[bytes], size: int) -> ImportJob:
    """Store the upload and queue its import for `user`; Conflict while one of theirs runs."""
    with transaction.atomic():
        hold_user(user.pk)
        active = ImportJob.objects.select_for_update().filter(owner_id=user.pk, status__in=ACTIVE)
        for job in active:
            if not _fail_if_stale(job):
                raise Conflict(_("An import of yours is still running; try again when it ends."))
        job = ImportJob(owner_id=user.pk, size_bytes=size)
        source.seek(0)
        job.file.save(f"{job.pk}.upload", File(source), save=False)
        job.save(force_insert=True)
        transaction.on_commit(lambda: import_upload.enqueue(str(job.pk), user.pk))
    return job


def get_import(*, user: Any, job_id: Any) -> ImportJob:
    """Return the user's import job (NotFound for anyone else's or a malformed id); a job
    that stopped beating reads as failed."""
    pk = parse_uuid(job_id)
    job = ImportJob.objects.filter(pk=pk, owner_id=user.pk).first() if pk else None
    if job is None:
        raise NotFound(_("No such import."))
    _fail_if_stale(job)
    return job


def imported_conversations(*, user: Any, job: ImportJob) -> list[Conversation]:
    """The ready job's conversations, in the file's order (those deleted since are gone)."""
    ids = job.conversation_ids
    found: dict[str, Conversation] = {}
    for start in range(0, len(ids), READ_BACK):
        rows = selectors.owned_by(user).filter(pk__in=ids[start : start + READ_BACK])
        found |= {str(row.pk): row for row in rows}
    return [found[pk] for pk in ids if pk in found]


def _fail_if_stale(job: ImportJob) -> bool:
    """Mark a pending or running job failed if its heartbeat stopped; say whether it did
    (its upload is then deleted)."""
    failed = fail_if_stale(
        job, error_code="interrupted", error=_("The import was interrupted. Try again.")
    )
    _drop_upload(job)
    return failed


@task()
def import_upload(job_id: str, user_id: int) -> str:
    """Import the job's stored file, all or nothing, and delete it; return the job's status.
    A file nothing of which can be read ends the job failed with the refusal the request
    would have answered (its code and words), and nothing stored."""
    with rls.as_user(user_id):
        try:
            _import(job_id)
        except _Ended:
            logger.info("import %s ended while this run imported; its import undone", job_id)
        except ServiceError as exc:  # invalid_import, too_long: the file's fault
            _end_failed(job_id, exc.code, exc.message)
        except Exception:
            logger.exception("import %s failed", job_id)
            _end_failed(job_id, "failed", _("The import could not be finished. Try again later."))
        job = ImportJob.objects.filter(pk=job_id).first()
        if job is None:
            return "gone"
        _drop_upload(job)
        return job.status


def _import(job_id: str) -> None:
    started = ImportJob.objects.filter(pk=job_id, status__in=ACTIVE).update(
        status=ImportJob.Status.RUNNING, updated_at=timezone.now()
    )
    if not started:
        return  # ended before this run (a run again after its end): nothing to do
    job = ImportJob.objects.select_related("owner").get(pk=job_id)
    with _beating(job_id, job.owner_id), job.file.open("rb") as source, transaction.atomic():
        imported = imports.import_file(user=job.owner, source=source)
        now = timezone.now()
        ended = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.RUNNING).update(
            status=ImportJob.Status.READY,
            imported_count=len(imported.conversations),
            skipped_count=imported.skipped_count,
            conversation_ids=[str(c.pk) for c in imported.conversations],
            skipped=[s.as_dict() for s in imported.skipped],
            finished_at=now,
            updated_at=now,
        )
        if not ended:
            raise _Ended


def _end_failed(job_id: str, code: str, error: str) -> None:
    ImportJob.objects.filter(pk=job_id, status__in=ACTIVE).update(
        status=ImportJob.Status.FAILED,
        error_code=code,
        error=error[:300],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )


def _drop_upload(job: ImportJob) -> None:
    """Delete the ended job's stored upload (kept while it may still be imported)."""
    if job.status in ACTIVE or not job.file:
        return
    job.file.delete(save=False)
    ImportJob.objects.filter(pk=job.pk).update(file="")


@contextlib.contextmanager
def _beating(job_id: str, user_id: Any) -> Iterator[None]:
    """Beat the running job every HEARTBEAT_SECONDS from a thread with its own connection,
    while the import's transaction holds everything back. Not on SQLite: one writer at a
    time there, and the import is it."""
    if connection.vendor == "sqlite":
        yield
        return
    stop = threading.Event()
    running = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.RUNNING)

    def beat() -> None:
        try:
            while not stop.wait(HEARTBEAT_SECONDS):
                try:
                    with rls.as_user(user_id):
                        running.update(updated_at=timezone.now())
                except Exception:  # the database away for a moment: beat again next time
                    logger.warning("import %s: heartbeat failed", job_id, exc_info=True)
        finally:
            connection.close()  # this thread's own

    beating = threading.Thread(target=beat, name=f"import-beat-{job_id}", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join(timeout=HEARTBEAT_SECONDS + 30)


@rls.maintenance()  # every user's old imports
def purge_old_imports(*, now: Any = None) -> int:
    """Delete import records older than KEEP that have ended, or stopped beating that long
    ago, any upload left with them; return how many. A job still beating is kept."""
    cutoff = (now or timezone.now()) - KEEP
    old = ImportJob.objects.filter(created_at__lt=cutoff)
    return purge(old.exclude(status__in=ACTIVE, updated_at__gte=cutoff))
