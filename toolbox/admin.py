"""Staff register MCP servers and ask them for their tools again."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from .models import McpServer
from .servers import arefresh

SETTINGS_FIELDS = ("name", "url", "headers", "command", "args", "env", "source")


class McpServerForm(forms.ModelForm):
    url = forms.URLField(label=_("URL"), max_length=500, required=False, assume_scheme="https")

    class Meta:
        model = McpServer
        fields = ("name", "url", "headers", "command", "args", "env", "enabled")

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("url")) == bool(data.get("command")):
            raise ValidationError(
                _("Give a URL (streamable HTTP) or a command (stdio, run on this server).")
            )
        return data


@admin.register(McpServer)
class McpServerAdmin(admin.ModelAdmin):
    form = McpServerForm
    list_display = ("name", "transport", "source", "enabled", "tool_count", "refreshed_at")
    list_filter = ("enabled", "source")
    readonly_fields = ("source", "listed_tools", "refreshed_at", "error")
    actions = ["refresh_tools"]

    def get_readonly_fields(self, request: HttpRequest, obj: McpServer | None = None):
        if obj is not None and obj.source == McpServer.Source.SETTINGS:
            # Written by CHAT_MCP_SERVERS: only switching it off is the admin's.
            return (*SETTINGS_FIELDS, "listed_tools", "refreshed_at", "error")
        return self.readonly_fields

    @admin.display(description=_("tools"))
    def tool_count(self, obj: McpServer) -> int:
        return len(obj.tools or [])

    @admin.display(description=_("tools listed"))
    def listed_tools(self, obj: McpServer) -> str:
        return "\n".join(f"{t['name']}: {t.get('description', '')}" for t in obj.tools or [])

    @admin.action(description=_("Refresh tools (ask the servers again)"))
    def refresh_tools(self, request: HttpRequest, queryset: QuerySet[McpServer]) -> None:
        failed = 0
        for server in queryset:
            if async_to_sync(arefresh)(server).error:
                failed += 1
                self.message_user(request, f"{server.name}: {server.error}", messages.WARNING)
        done = queryset.count() - failed
        self.message_user(
            request,
            ngettext(
                "%(count)d server listed its tools.", "%(count)d servers listed their tools.", done
            )
            % {"count": done},
        )
