"""Messages, their feedback and the files sent with them."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.schemas import MODEL_ID_MAX_LENGTH

from .conversation import ID_MAX_LENGTH, Conversation

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
