"""API tokens (only a hash and a short prefix are stored) and each user's chat settings."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from core.schemas import MODEL_ID_MAX_LENGTH


class ApiToken(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(_("name"), max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Theme(models.TextChoices):
    SYSTEM = "system", _("As the device prefers")
    LIGHT = "light", _("Light")
    DARK = "dark", _("Dark")


class UserSettings(models.Model):
    """A user's chat settings (SPEC: Models and instructions); absent = the defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_settings"
    )
    # Blank = the site's default model (CHAT_MODEL).
    default_model = models.CharField(
        _("default model"), max_length=MODEL_ID_MAX_LENGTH, blank=True, default=""
    )
    # Added to the instructions of every conversation of this user.
    custom_instructions = models.TextField(_("custom instructions"), blank=True, default="")
    # Memories across conversations: recalled into every request and saved by the agent.
    memory_enabled = models.BooleanField(_("memory"), default=True)
    # Tool ids on by default in this user's conversations (null: the site's defaults).
    tools_enabled = models.JSONField(_("tools"), null=True, blank=True, default=None)
    # Light, dark, or as the device prefers (every page: html[data-theme]).
    theme = models.CharField(_("theme"), max_length=8, choices=Theme.choices, default=Theme.SYSTEM)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"settings of {self.user_id}"
