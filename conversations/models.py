"""Conversations, their messages, feedback and projects (SPEC's data model)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.schemas import MODEL_ID_MAX_LENGTH

TITLE_MAX_LENGTH = 200
PROJECT_NAME_MAX_LENGTH = 100
DESCRIPTION_MAX_LENGTH = 10_000
SERVICE_ID_MAX_LENGTH = 100
# A message's, an attachment's, a client's id as the API and the frames accept them.
ID_MAX_LENGTH = 100
MAX_ATTACHMENTS = 10
# `Message.metadata[TOKENS_ESTIMATED]`: its `tokens_used` is our estimate of the text, not a
# count the model server reported (a user's message, a reply without usage, an import).
TOKENS_ESTIMATED = "tokens_estimated"
# What a message says and how it came to be: the admin shows these, an export writes them.
MESSAGE_RECORD_FIELDS = (
    "role",
    "content",
    "parts",
    "model",
    "tokens_used",
    "finish_reason",
    "metadata",
    "sequence_number",
)


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


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", _("User")
        ASSISTANT = "assistant", _("Assistant")
        SYSTEM = "system", _("System")

    class FinishReason(models.TextChoices):
        END_TURN = "end_turn"
        MAX_TOKENS = "max_tokens"
        STOP_SEQUENCE = "stop_sequence"
        STOPPED = "stopped"
        ERROR = "error"
        INTERRUPTED = "interrupted"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    parts = models.JSONField(default=list, blank=True)
    model = models.CharField(max_length=MODEL_ID_MAX_LENGTH, blank=True)
    tokens_used = models.PositiveIntegerField(default=0)
    finish_reason = models.CharField(
        max_length=16, choices=FinishReason.choices, blank=True, default=""
    )
    metadata = models.JSONField(default=dict, blank=True)
    sequence_number = models.PositiveIntegerField()
    # The message this one answers or follows on its branch (null for a root). Deleting a
    # message deletes its subtree (conversations/branches.py does it in one statement:
    # a cascade through Django's collector recurses once per level).
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING, related_name="children"
    )
    # NULL, not "", when unset: the unique (conversation, client_id) constraint ignores NULLs.
    client_id = models.CharField(max_length=ID_MAX_LENGTH, null=True, blank=True)  # noqa: DJ001
    # The reply run that wrote it (its question, or the reply itself): the trace id in logs.
    run_id = models.UUIDField(null=True, blank=True, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A default, not auto_now_add: an import writes each message's own time in its INSERT.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    is_flagged = models.BooleanField(_("reported"), default=False)
    flag_reason = models.CharField(_("report reason"), max_length=500, blank=True)

    class Meta:
        ordering = ["conversation", "sequence_number"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "sequence_number"], name="message_unique_sequence"
            ),
            models.UniqueConstraint(
                fields=["conversation", "client_id"],
                condition=Q(client_id__isnull=False),
                name="message_unique_client_id",
            ),
        ]
        indexes = [
            models.Index(fields=["role"], name="message_role"),
            # "How many since the summary" (replies/summaries.py), asked after every reply.
            models.Index(fields=["conversation", "created_at"], name="message_conversation_time"),
        ]

    def __str__(self) -> str:
        return f"#{self.sequence_number} {self.role}: {self.content[:60]}"

    @property
    def tokens_estimated(self) -> bool:
        """Say whether `tokens_used` is an estimate (older replies say so in their ledger)."""
        return metadata_says_estimated(self.metadata)


def metadata_says_estimated(metadata: object) -> bool:
    """Say whether a message's metadata marks its `tokens_used` as an estimate."""
    if not isinstance(metadata, dict):
        return False
    context = metadata.get("context")
    ledger = isinstance(context, dict) and bool(context.get("usage_estimated"))
    return bool(metadata.get(TOKENS_ESTIMATED)) or ledger


# The same question asked of rows in a query.
TOKENS_ESTIMATED_Q = Q(**{f"metadata__{TOKENS_ESTIMATED}": True}) | Q(
    metadata__context__usage_estimated=True
)


class MessageFeedback(models.Model):
    class Rating(models.TextChoices):
        UP = "up", _("Helpful")
        DOWN = "down", _("Not helpful")

    class Reason(models.TextChoices):
        """What was wrong with a reply (a thumbs-down's chips)."""

        INCORRECT = "incorrect", _("Incorrect")
        UNHELPFUL = "not_helpful", _("Not helpful")
        INSTRUCTIONS = "ignored_instructions", _("Did not follow instructions")
        UNSAFE = "unsafe", _("Unsafe or harmful")
        TOO_LONG = "too_long", _("Too long")
        TOO_SHORT = "too_short", _("Too short")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback")
    rating = models.CharField(max_length=4, choices=Rating.choices)
    comment = models.TextField(blank=True, max_length=2000)
    reasons = models.JSONField(default=list, blank=True)  # Reason values, in their order
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "message"], name="feedback_one_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.rating} on {self.message_id}"


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


class Attachment(models.Model):
    """A file the user put in the message box: uploaded first (no message yet), then sent
    with a message (SPEC "Attachments"). Deleted with its message or conversation; one never
    sent is purged after a day."""

    class Kind(models.TextChoices):
        IMAGE = "image"
        DOCUMENT = "document"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="attachments"
    )
    message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="attachment_files"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    content_type = models.CharField(max_length=100)
    size_bytes = models.PositiveBigIntegerField()
    file = models.FileField(upload_to="attachments/%Y/%m/", max_length=300)
    # A document's text, split and indexed by the knowledge base, searched in this
    # conversation only (its `scope`); deleted with the attachment.
    document = models.OneToOneField(
        "knowledge.Document", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        indexes = [
            models.Index(fields=["created_at"], name="attachment_unsent", condition=Q(message=None))
        ]

    def __str__(self) -> str:
        return self.name
