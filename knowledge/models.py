"""Documents a user uploaded and the chunks retrieval searches.

On PostgreSQL each chunk also has a stored generated `search_vector` (tsvector, `simple`
config, GIN) and a pg_trgm GIN index on `text`; both are added by migration 0002 with
SQL so the model stays the same on SQLite (see `knowledge/migrations/0002_search.py`).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

TITLE_MAX_LENGTH = 200


class Document(models.Model):
    class Kind(models.TextChoices):
        TEXT = "txt", _("Text")
        MARKDOWN = "md", _("Markdown")
        PDF = "pdf", _("PDF")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="documents"
    )
    title = models.CharField(_("title"), max_length=TITLE_MAX_LENGTH)
    filename = models.CharField(_("file name"), max_length=255)
    kind = models.CharField(_("type"), max_length=8, choices=Kind.choices)
    size_bytes = models.PositiveBigIntegerField(_("size"), default=0)
    # The extracted text; chunks point into it by character offsets.
    text = models.TextField(blank=True)
    section_count = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # None: the user's knowledge base, searched in every conversation. Otherwise the id of
    # the one conversation it was attached in, and searched only there.
    scope = models.UUIDField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at", "-id"], name="doc_owner_created")]

    def __str__(self) -> str:
        return self.title


class SavedQuestion(models.Model):
    """A question the user keeps to check retrieval with, and the document that answers it
    (the Documents page shows whether it is still found in the top three)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    question = models.CharField(_("question"), max_length=500)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="saved_questions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["owner", "created_at"], name="savedq_owner_created")]

    def __str__(self) -> str:
        return self.question


class DocumentChunk(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    # Denormalized from the document so retrieval filters one user's rows without a join.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    scope = models.UUIDField(null=True, blank=True)  # the document's scope, denormalized
    ordinal = models.PositiveIntegerField()
    section_index = models.PositiveIntegerField(default=0)
    section_number = models.CharField(max_length=40, blank=True)
    section_title = models.CharField(max_length=300, blank=True)
    heading = models.CharField(max_length=400, blank=True)
    text = models.TextField()
    # Extra index terms (suffixes of Korean words) so prefix queries find substrings.
    terms = models.TextField(blank=True)
    start = models.PositiveIntegerField(default=0)
    end = models.PositiveIntegerField(default=0)
    # The chunk's unit vector (float32 bytes, knowledge/embeddings.py) and the model that
    # made it; empty until embedded (in the background after an upload, or by
    # `manage.py embed_chunks`), and retrieval then finds it by its words alone.
    embedding = models.BinaryField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=120, blank=True, default="")

    class Meta:
        ordering = ["document", "ordinal"]
        indexes = [
            models.Index(fields=["owner", "document"], name="chunk_owner_document"),
            # The dense path's "did this user's vectors change?" (a count and a max) reads
            # this index alone; the scope check finds a user's attached chunks without a
            # scan. Without them both scanned every chunk: 360 ms of a 450 ms search.
            models.Index(fields=["owner", "embedding_model", "id"], name="chunk_owner_vectors"),
            models.Index(
                fields=["owner"], name="chunk_owner_scoped", condition=models.Q(scope__isnull=False)
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="chunk_unique_ordinal")
        ]

    def __str__(self) -> str:
        return f"{self.document_id} #{self.ordinal} {self.heading}"
