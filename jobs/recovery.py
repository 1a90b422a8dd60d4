"""Durable tasks on django-tasks-db: a task left running by a worker that stopped beating is
made ready again, and a task that failed is enqueued again after a backoff.

django-tasks-db claims a task by marking it running under the worker's id, and leaves it
so forever if that worker is killed. Each worker here (`manage.py worker`) beats in
`TaskWorker` every BEAT_SECONDS; any worker finds the running tasks whose worker has not
beaten for STALE_SECONDS and makes them ready again. A task is therefore written to run
more than once safely: it does what is still undone (embedding the chunks still pending),
never the same thing twice.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from .models import TaskWorker

logger = logging.getLogger(__name__)

NICE = int(os.environ.get("CHAT_WORKER_NICE", 10))  # the worker's CPU priority (higher: lower)
BEAT_SECONDS = float(os.environ.get("CHAT_WORKER_BEAT_SECONDS", 5))
STALE_SECONDS = float(os.environ.get("CHAT_WORKER_STALE_SECONDS", 30))
# A failed task runs again after these many seconds, then fails for good (the admin's
# Task Results list shows it, with its traceback).
BACKOFF_SECONDS = (10, 60, 300)


def beat(worker_id: str) -> None:
    """Say that `worker_id` is alive."""
    TaskWorker.objects.update_or_create(pk=worker_id, defaults={"beat_at": timezone.now()})


def forget(worker_id: str) -> None:
    """A worker that stops cleanly leaves no beat behind."""
    TaskWorker.objects.filter(pk=worker_id).delete()


def reclaim_stale() -> int:
    """Make ready again the tasks left running by workers that stopped beating; return how
    many. Two workers doing this at once each take different rows (SKIP LOCKED)."""
    now = timezone.now()
    stale_before = now - timedelta(seconds=STALE_SECONDS)
    alive = set(TaskWorker.objects.filter(beat_at__gte=stale_before).values_list("pk", flat=True))
    reclaimed = 0
    with transaction.atomic():
        running = DBTaskResult.objects.running().filter(started_at__lt=stale_before)
        for result in running.select_for_update(skip_locked=True):
            last = result.worker_ids[-1] if result.worker_ids else None
            if last in alive:
                continue
            result.status = TaskResultStatus.READY
            result.run_after = now
            result.save(update_fields=["status", "run_after"])
            logger.warning(
                "task %s (%s): its worker %s died; ready again", result.pk, result.task_path, last
            )
            reclaimed += 1
    TaskWorker.objects.filter(beat_at__lt=now - timedelta(seconds=10 * STALE_SECONDS)).delete()
    return reclaimed


def again_later(task: Any, attempt: int, *args: Any, **kwargs: Any) -> bool:
    """Enqueue `task(*args, attempt=attempt + 1, **kwargs)` after its backoff; False when
    `attempt` was the last, or when tasks run where they are enqueued (SQLite: nothing
    waits for later there), and the caller then lets the failure stand."""
    if attempt > len(BACKOFF_SECONDS) or not task.get_backend().supports_defer:
        return False
    delay = timedelta(seconds=BACKOFF_SECONDS[attempt - 1])
    task.using(run_after=timezone.now() + delay).enqueue(*args, attempt=attempt + 1, **kwargs)
    return True


def retried(
    task_name: str, attempt: int, work: Callable[[], Any], again: Callable[[], bool]
) -> Any:
    """Run `work()`; if it fails, enqueue the task again (`again()`) or, out of attempts,
    let the failure stand."""
    try:
        return work()
    except Exception:
        if not again():
            raise
        logger.exception("task %s failed (attempt %d); it will run again", task_name, attempt)
        return {"retried": attempt}
