"""`manage.py worker`: run the background tasks (django-tasks-db's worker), beating so that a
task this worker leaves running when killed is run again by another (jobs/recovery.py)."""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection

# django-tasks-db's own loop: claims with SKIP LOCKED, runs, records the outcome. Its
# module path is pinned with the package (pyproject.toml).
from django_tasks_db.management.commands.db_worker import Worker

from jobs import recovery, schedule


class Command(BaseCommand):
    help = (
        "Run background tasks until stopped: embedding uploads, and the maintenance cron"
        " used to run (jobs/schedule.py; CHAT_MAINTENANCE=0 leaves it to cron)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--interval", type=float, default=1.0, help="seconds between polls")
        parser.add_argument("--batch", action="store_true", help="stop when no task is ready")
        parser.add_argument(
            "--if-needed",
            action="store_true",
            help="exit at once when tasks run in the web process (SQLite)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["if_needed"] and not uses_workers():
            return
        # Background work yields the CPU to the processes that stream replies when they
        # share a machine (the scheduler runs it when they leave a core idle).
        os.nice(recovery.NICE)
        worker_id = f"{socket.gethostname()}-{os.getpid()}"[:100]
        recovery.beat(worker_id)
        recovery.reclaim_stale()
        schedule.enqueue_due()
        stop = threading.Event()
        beating = threading.Thread(target=_beat, args=(worker_id, stop), daemon=True)
        beating.start()
        worker = Worker(
            queue_names=["default"],
            interval=options["interval"],
            batch=options["batch"],
            backend_name="default",
            startup_delay=False,
            max_tasks=None,
            worker_id=worker_id,
            excluded_queue_names=[],
        )
        worker.configure_signals()
        try:
            worker.run()
        finally:
            stop.set()
            beating.join(timeout=recovery.BEAT_SECONDS + 5)
            recovery.forget(worker_id)


def uses_workers() -> bool:
    """Whether tasks wait in the database for a worker (else they run where enqueued)."""
    return settings.TASKS["default"]["BACKEND"] == "django_tasks_db.DatabaseBackend"


def _beat(worker_id: str, stop: threading.Event) -> None:
    try:
        while not stop.wait(recovery.BEAT_SECONDS):
            try:
                recovery.beat(worker_id)
                recovery.reclaim_stale()
                schedule.enqueue_due()
            except Exception:  # the database away for a moment: beat again next time
                connection.close()
    finally:
        connection.close()
