"""Projects, conversations and their read-only share links."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from core.schemas import MODEL_ID_MAX_LENGTH

TITLE_MAX_LENGTH = 200
PROJECT_NAME_MAX_LENGTH = 100
DESCRIPTION_MAX_LENGTH = 10_000
SERVICE_ID_MAX_LENGTH = 100
# A message's, an attachment's, a client's id as the API and the frames accept them.
ID_MAX_LENGTH = 100
MAX_ATTACHMENTS = 10


class Project(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects"
    )
    name = models.CharField(_("name"), max_length=PROJECT_NAME_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="project_unique_name_per_owner")
        ]

    def __str__(self) -> str:
        return self.name


class Conversation(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        ARCHIVED = "archived", _("Archived")
        SUMMARIZED = "summarized", _("Summarized")

    class TitleSource(models.TextChoices):
        USER = "user", _("The user")
        FIRST_WORDS = "first_words", _("Its first words")
        MODEL = "model", _("The model")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    title = models.CharField(_("title"), max_length=TITLE_MAX_LENGTH, blank=True)
    description = models.TextField(_("description"), blank=True)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="conversations"
    )
    service_id = models.CharField(
        _("service"), max_length=SERVICE_ID_MAX_LENGTH, blank=True, default=""
    )
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.ACTIVE
    )
    summary = models.TextField(_("summary"), blank=True)
    summary_at = models.DateTimeField(null=True, blank=True)
    # The newest message the summary covers: the next automatic one rolls on from it.
    summary_through = models.ForeignKey(
        "Message",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("summary covers up to"),
    )
    parent_conversation = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks"
    )
    forked_from_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    message_count = models.PositiveIntegerField(default=0)
    total_tokens_used = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    is_flagged = models.BooleanField(_("flagged"), default=False)
    flag_reason = models.CharField(_("flag reason"), max_length=500, blank=True)
    # The highest sequence number ever handed out: numbers are never reused or renumbered,
    # so a delete leaves a gap and every `after=N` cursor a client holds stays valid.
    last_sequence_number = models.PositiveIntegerField(default=0)
    # The leaf of the branch the user is on: the conversation as shown is the path from
    # the root to it (SPEC: Branches).
    current_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who wrote the title: a model rewrites only a title taken from the first words.
    title_source = models.CharField(
        max_length=16, choices=TitleSource.choices, default=TitleSource.USER
    )
    # The preset it was started from: each turn reads the preset as it is then. The
    # database unlinks it when the preset is deleted (ON DELETE SET NULL, migration 0014):
    # a shared preset's conversations belong to users its owner's scope cannot see.
    preset = models.ForeignKey(
        "presets.Preset",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,  # the owner's own conversations; the database does the rest
        db_constraint=False,
        related_name="+",
        verbose_name=_("preset"),
    )
    # SPEC: Models and instructions. Blank model = the owner's default, else the site's.
    model = models.CharField(_("model"), max_length=MODEL_ID_MAX_LENGTH, blank=True, default="")
    system_prompt = models.TextField(_("system prompt"), blank=True, default="")
    temperature = models.FloatField(_("temperature"), null=True, blank=True)
    # Tool ids on for this conversation (SPEC: Tools); null: the owner's default.
    tools = models.JSONField(_("tools"), null=True, blank=True, default=None)
    # Shown first in the sidebar (SPEC: The shell and the landing).
    pinned = models.BooleanField(_("pinned"), default=False)
    # Set only at creation: never listed, searched, shared or used for memories; deleted
    # when its last socket closes or a day after its last message (conversations/temporary.py).
    temporary = models.BooleanField(_("temporary"), default=False, editable=False)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [
            # The list page: one user's rows in each sort order, newest first, id as tiebreak.
            models.Index(fields=["created_by", "-updated_at", "-id"], name="conv_owner_updated"),
            models.Index(fields=["created_by", "-created_at", "-id"], name="conv_owner_created"),
            # On PostgreSQL: last_message_at DESC NULLS LAST (migration 0006), as the list
            # orders it: conversations without messages come last.
            models.Index(
                fields=["created_by", "-last_message_at", "-id"], name="conv_owner_last_msg"
            ),
            models.Index(fields=["created_by", "-message_count", "-id"], name="conv_owner_count"),
            models.Index(
                fields=["created_by", "status", "-updated_at", "-id"], name="conv_owner_status"
            ),
            models.Index(
                fields=["created_by", "project", "-updated_at", "-id"], name="conv_owner_project"
            ),
            models.Index(
                fields=["created_by", "service_id", "-updated_at", "-id"], name="conv_owner_service"
            ),
            models.Index(
                fields=["status", "archived_at"],
                name="conv_archived",
                condition=Q(status="archived"),
            ),
            # The purge of temporary conversations a day after their last message.
            models.Index(
                fields=["last_message_at", "created_at"],
                name="conv_temporary",
                condition=Q(temporary=True),
            ),
        ]

    def __str__(self) -> str:
        return self.title or str(self.id)


class Share(models.Model):
    """A read-only link to a conversation's current branch as it was when shared.

    The snapshot is the path's message ids (messages are never edited in place: an edit
    is a new branch), so the link never shows a later message; a message deleted since
    is gone from it too. Revoking deletes the row: the link then answers 404.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="shares")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    # 32 URL-safe characters from secrets.token_urlsafe(24): 192 bits.
    token = models.CharField(max_length=64, unique=True)
    title = models.CharField(max_length=TITLE_MAX_LENGTH, blank=True)
    message_ids = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["created_by", "-created_at"], name="share_owner_created")]

    def __str__(self) -> str:
        return f"share of {self.conversation_id}"
