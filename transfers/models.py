"""Work on a user's conversations done in the background: an export of all of them (SPEC:
`POST /api/v1/exports`, a zip of one Markdown file per conversation, kept for a day), and an
import file too large to read in the request."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ExportJob(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting")
        RUNNING = "running", _("Writing")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    class Format(models.TextChoices):
        MARKDOWN_ZIP = "markdown-zip", _("Markdown files in a zip")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="export_jobs"
    )
    format = models.CharField(max_length=20, choices=Format.choices)
    include_metadata = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    file = models.FileField(upload_to="exports/%Y/%m/", max_length=300, blank=True)
    conversation_count = models.PositiveIntegerField(default=0)
    size_bytes = models.PositiveBigIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # Written as the job goes on: a running job silent for long belonged to a process
    # that died (it is then failed, and the person may start another).
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="exportjob_owner_recent")]

    def __str__(self) -> str:
        return f"{self.format} {self.status}"


class ImportJob(models.Model):
    """An import file too large to read in the request (SPEC: `POST
    /api/v1/conversations/import` → 202), read by a task; its upload is deleted when it ends."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting")
        RUNNING = "running", _("Importing")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    file = models.FileField(upload_to="imports/%Y/%m/", max_length=300, blank=True)
    size_bytes = models.PositiveBigIntegerField(default=0)
    imported_count = models.PositiveIntegerField(default=0)
    skipped_count = models.PositiveIntegerField(default=0)
    # What the 201 answer would have said: the new conversations (read back by id) and
    # the file's conversations left out, `{index, title, reason}` (≤ 1,000).
    conversation_ids = models.JSONField(default=list, blank=True)
    skipped = models.JSONField(default=list, blank=True)
    # The refusal's code (`invalid_import`, `too_long`) or `interrupted`/`failed`, and its words.
    error_code = models.CharField(max_length=20, blank=True, default="")
    error = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # Beaten while it runs: a job silent for long belonged to a process that died.
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="importjob_owner_recent")]

    def __str__(self) -> str:
        return f"import {self.status}"
