"""Saved prompts: a `/command` that puts its text into the composer, `{{variables}}` asked
for first (SPEC "Voice, artifacts, images, exports, prompts, side by side")."""

from __future__ import annotations

import re
import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

COMMAND_PATTERN = r"^[a-z0-9][a-z0-9-]{0,31}$"
COMMAND_MAX_LENGTH = 32
TITLE_MAX_LENGTH = 80
CONTENT_MAX_LENGTH = 16_000
MAX_PROMPTS = 500  # per user: the composer's list stays a list
# `{{name}}`: a word of letters, digits, `_` or `-` (any script: `{{도시}}` too).
VARIABLE = re.compile(r"\{\{\s*([\w-]{1,40})\s*\}\}")


class Prompt(models.Model):
    """A user's prompt; `shared` (set by staff only) offers it to everyone, read-only."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="prompts"
    )
    command = models.CharField(_("command"), max_length=COMMAND_MAX_LENGTH)
    title = models.CharField(_("title"), max_length=TITLE_MAX_LENGTH)
    content = models.TextField(_("text"))
    shared = models.BooleanField(_("shared with everyone"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["command", "id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "command"], name="prompt_owner_command"),
        ]
        indexes = [
            models.Index(
                fields=["command"], name="prompt_shared_command", condition=models.Q(shared=True)
            ),
        ]

    def __str__(self) -> str:
        return f"/{self.command}"

    @property
    def variables(self) -> list[str]:
        """The names of its `{{variables}}`, each once, in order."""
        return list(dict.fromkeys(VARIABLE.findall(self.content)))
