"""Presets (assistants): a named set of instructions, model, tools, knowledge and starters."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from core.schemas import MODEL_ID_MAX_LENGTH

NAME_MAX_LENGTH = 80
ICON_MAX_LENGTH = 16  # an emoji (some are several code points) or a few letters
STARTER_MAX_LENGTH = 300
MAX_STARTERS = 6
MAX_KNOWLEDGE_IDS = 50


class Preset(models.Model):
    """A user's preset; `shared` (set by staff only) shows it to everyone, read-only.

    A conversation started from it keeps a link (`Conversation.preset`) and each new turn
    reads the preset as it is then; deleting it leaves those conversations on the defaults.
    """

    class Scope(models.TextChoices):
        ALL = "all", _("All my documents")
        PROJECT = "project", _("A project's files")
        DOCUMENTS = "documents", _("Chosen documents")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="presets"
    )
    name = models.CharField(_("name"), max_length=NAME_MAX_LENGTH)
    icon = models.CharField(_("icon"), max_length=ICON_MAX_LENGTH, blank=True, default="")
    instructions = models.TextField(_("instructions"), blank=True, default="")
    # Blank: the user's default model, else the site's.
    model = models.CharField(_("model"), max_length=MODEL_ID_MAX_LENGTH, blank=True, default="")
    temperature = models.FloatField(_("temperature"), null=True, blank=True)
    # Tool ids on in its conversations (null: the user's default tools).
    tools = models.JSONField(_("tools"), null=True, blank=True, default=None)
    knowledge_scope = models.CharField(
        _("knowledge"), max_length=16, choices=Scope.choices, default=Scope.ALL
    )
    # A project's id (scope "project") or document ids (scope "documents").
    knowledge_ids = models.JSONField(default=list, blank=True)
    starters = models.JSONField(_("starter prompts"), default=list, blank=True)
    shared = models.BooleanField(_("shared with everyone"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        indexes = [
            models.Index(fields=["owner", "name"], name="preset_owner_name"),
            models.Index(
                fields=["name"], name="preset_shared_name", condition=models.Q(shared=True)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.icon} {self.name}".strip()
