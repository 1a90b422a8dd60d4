"""MCP servers the agent may reach: registered by staff (admin) or by settings."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

SERVER_NAME_MAX_LENGTH = 40


class McpServer(models.Model):
    """One MCP server and the tools it listed when last asked (`tools`)."""

    class Source(models.TextChoices):
        ADMIN = "admin", _("admin")
        SETTINGS = "settings", _("settings (CHAT_MCP_SERVERS)")

    name = models.SlugField(
        _("name"),
        max_length=SERVER_NAME_MAX_LENGTH,
        unique=True,
        help_text=_("Letters, digits, - and _: tool ids are mcp:<name>:<tool>."),
    )
    # Streamable HTTP: `url` (and `headers`). Stdio: `command` (and `args`, `env`); it runs
    # on this server, with this process's rights, so only staff may register one.
    url = models.URLField(_("URL"), max_length=500, blank=True)
    headers = models.JSONField(_("headers"), default=dict, blank=True)
    command = models.CharField(_("command"), max_length=500, blank=True)
    args = models.JSONField(_("arguments"), default=list, blank=True)
    env = models.JSONField(_("environment"), default=dict, blank=True)
    enabled = models.BooleanField(_("enabled"), default=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.ADMIN)
    # [{name, description, input_schema}] as the server listed them (malformed ones left out)
    tools = models.JSONField(default=list, blank=True, editable=False)
    refreshed_at = models.DateTimeField(null=True, blank=True, editable=False)
    error = models.TextField(blank=True, editable=False)  # why the last listing failed

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=(~models.Q(url="") & models.Q(command=""))
                | (models.Q(url="") & ~models.Q(command="")),
                name="mcp_server_url_or_command",
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def transport(self) -> str:
        return "streamable_http" if self.url else "stdio"
