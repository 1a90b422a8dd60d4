"""The reply being written in a conversation (one orchestrator's claim on it)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from .conversation import Conversation
from .message import Message


class ReplyRun(models.Model):
    """One reply being written: claimed, streamed, stored, announced, by one orchestrator.

    Its id is the stored reply's id and the trace id of every log line about it. One ask
    runs at a time in a conversation: one run, or a pair answering the same message side
    by side (lanes 0 and 1; a partial unique index keeps one running run per lane, across
    processes). `heartbeat_at` tells the others the owner process is alive.
    """

    class Status(models.TextChoices):
        RUNNING = "running"
        FINISHED = "finished"  # stored with whatever finish_reason the reply has

    id = models.UUIDField(primary_key=True, editable=False)
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="reply_runs"
    )
    reply_to = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="reply_runs"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    owner = models.CharField(max_length=100, blank=True)  # the process that runs it
    heartbeat_at = models.DateTimeField()
    # Tokens held against its owner's monthly budget while it runs (0 without a budget):
    # counted by every other claim until the reply is stored with its real usage.
    reserved_tokens = models.PositiveIntegerField(default=0)
    lane = models.PositiveSmallIntegerField(default=0)  # 1: the second of a side-by-side pair
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "lane"],
                condition=Q(status="running"),
                name="reply_run_one_running_per_lane",
            )
        ]
        indexes = [
            models.Index(
                fields=["heartbeat_at"], name="reply_run_running", condition=Q(status="running")
            )
        ]

    def __str__(self) -> str:
        return f"run {self.id} ({self.status})"
