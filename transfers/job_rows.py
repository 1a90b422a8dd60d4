"""What the export and the import jobs share (export_jobs.py, import_jobs.py): a job whose
heartbeat stopped reads as failed, and a day on its record goes, its file with it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import models
from django.utils import timezone

STALE = timedelta(minutes=10)  # a job silent this long belonged to a process that died
KEEP = timedelta(hours=24)  # how long a job's record (and an export's zip) is kept
HEARTBEAT_SECONDS = 5.0  # how often a running job says it is alive
ACTIVE = ("pending", "running")  # both jobs' statuses that have not ended


def fail_if_stale(job: Any, **ended: Any) -> bool:
    """Mark a pending or running job failed, with the `ended` fields (its error), if its
    heartbeat stopped (no worker, or its worker died and none took it up); say whether it
    did. Conditional: a run that ended the job meanwhile wins."""
    cutoff = timezone.now() - STALE
    if job.status not in ACTIVE or job.updated_at > cutoff:
        return False
    now = timezone.now()
    failed = type(job).objects.filter(pk=job.pk, status__in=ACTIVE, updated_at__lte=cutoff)
    count = failed.update(status="failed", finished_at=now, updated_at=now, **ended)
    job.refresh_from_db()
    return bool(count)


def purge(jobs: models.QuerySet) -> int:
    """Delete `jobs`, each one's stored file first; return how many."""
    count = 0
    for job in jobs:
        if job.file:
            job.file.delete(save=False)
        job.delete()
        count += 1
    return count
