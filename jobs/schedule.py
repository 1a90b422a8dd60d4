"""Maintenance that used to need cron, run by the workers on a schedule: each worker, as
it beats, enqueues what is due (one of them, whichever takes the row first).

`CHAT_MAINTENANCE=0` turns it off (for a site that keeps its own cron lines).
"""

from __future__ import annotations

import io
import logging
import os
from datetime import timedelta

from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from .models import ScheduledRun

logger = logging.getLogger(__name__)

# The commands run, and how often: deleting what has outlived its retention (archived and
# temporary conversations, unsent uploads, export zips, import records), and the agent
# threads' checkpoints.
EVERY: dict[str, timedelta] = {
    "purge_archived": timedelta(hours=1),
    "purge_exports": timedelta(hours=1),
    "purge_imports": timedelta(hours=1),
    "prune_checkpoints": timedelta(days=1),
}


def enabled() -> bool:
    return os.environ.get("CHAT_MAINTENANCE", "1") != "0"


def enqueue_due() -> list[str]:
    """Enqueue the maintenance commands that are due; return their names."""
    if not enabled():
        return []
    now = timezone.now()
    for name in EVERY:
        ScheduledRun.objects.get_or_create(pk=name, defaults={"due_at": now})
    due: list[str] = []
    with transaction.atomic():
        rows = ScheduledRun.objects.select_for_update(skip_locked=True).filter(
            pk__in=list(EVERY), due_at__lte=now
        )
        for row in rows:
            row.due_at = now + EVERY[row.pk]
            row.save(update_fields=["due_at"])
            due.append(row.pk)
        for name in due:
            transaction.on_commit(lambda name=name: run_maintenance.enqueue(name))
    return due


@task()
def run_maintenance(name: str) -> str:
    """Run one of the scheduled commands (only those); return what it printed."""
    if name not in EVERY:
        raise ValueError(f"not a scheduled command: {name!r}")
    out = io.StringIO()
    call_command(name, stdout=out)
    logger.info("maintenance %s: %s", name, out.getvalue().strip().replace("\n", "; "))
    return out.getvalue()
