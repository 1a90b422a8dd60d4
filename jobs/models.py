"""The task workers alive: each beats here, so a task left running by one that died (killed,
its machine gone) is found and run again by another (jobs/recovery.py)."""

from __future__ import annotations

from django.db import models


class TaskWorker(models.Model):
    """A `manage.py worker` process; `beat_at` is refreshed every few seconds while it runs."""

    id = models.CharField(primary_key=True, max_length=100)
    started_at = models.DateTimeField(auto_now_add=True)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.id


class ScheduledRun(models.Model):
    """When a maintenance command (jobs/schedule.py) is next due."""

    name = models.CharField(primary_key=True, max_length=64)
    due_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name
