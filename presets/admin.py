"""Staff see every preset; publishing or withdrawing one is written to the audit log."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from audit.models import AuditEntry
from audit.services import record

from .models import Preset
from .services import record_sharing


@admin.register(Preset)
class PresetAdmin(admin.ModelAdmin):
    list_display = ("__str__", "owner", "model", "shared_mark", "updated_at")
    list_filter = ("shared", "knowledge_scope")
    search_fields = ("name", "owner__username")
    list_select_related = ("owner",)
    # Read-only here: a preset's words are its owner's (they change it on the presets page
    # or the API, where its rules are checked); staff share, withdraw or delete it, through
    # the actions, which keep the rules and write the audit log.
    fields = readonly_fields = (
        "id",
        "owner",
        "name",
        "icon",
        "instructions",
        "model",
        "temperature",
        "tools",
        "knowledge_scope",
        "knowledge_ids",
        "starters",
        "shared",
        "created_at",
        "updated_at",
    )
    actions = ("publish", "withdraw")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a preset is made by its owner, on the presets page or the API

    @admin.display(description=_("shared with everyone"), ordering="shared")
    def shared_mark(self, obj: Preset) -> str:
        return "✓" if obj.shared else ""

    def delete_model(self, request: HttpRequest, obj: Preset) -> None:
        self.delete_queryset(request, Preset.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Preset]) -> None:
        for preset in queryset.filter(shared=True):
            record(
                actor=request.user,
                action=AuditEntry.Action.PRESET_UNPUBLISHED,
                target=preset,
                detail={"deleted": True},
            )
        queryset.delete()

    @admin.action(description=_("Share the selected presets with everyone"), permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Preset]) -> None:
        self._share(request, queryset, shared=True)

    @admin.action(description=_("Stop sharing the selected presets"), permissions=["change"])
    def withdraw(self, request: HttpRequest, queryset: QuerySet[Preset]) -> None:
        self._share(request, queryset, shared=False)

    def _share(self, request: HttpRequest, queryset: QuerySet[Preset], *, shared: bool) -> None:
        for preset in queryset.exclude(shared=shared):
            if shared and preset.knowledge_scope != Preset.Scope.ALL:
                self.message_user(
                    request,
                    _("%(name)s searches its owner's own files: it cannot be shared.")
                    % {"name": preset.name},
                    level="error",
                )
                continue
            preset.shared = shared
            preset.save(update_fields=["shared", "updated_at"])
            record_sharing(request.user, preset)
