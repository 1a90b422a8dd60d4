"""Staff see every prompt; sharing one with everyone, or withdrawing it, is audited."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .models import Prompt
from .services import delete_prompt, record_sharing


@admin.register(Prompt)
class PromptAdmin(admin.ModelAdmin):
    list_display = ("__str__", "title", "owner", "shared", "updated_at")
    list_filter = ("shared",)
    search_fields = ("command", "title", "owner__username")
    list_select_related = ("owner",)
    # Its words are its owner's (the prompts page or the API check them); staff share,
    # withdraw or delete it.
    fields = readonly_fields = (
        "id",
        "owner",
        "command",
        "title",
        "content",
        "shared",
        "created_at",
        "updated_at",
    )
    actions = ("publish", "withdraw")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Prompt) -> None:
        self.delete_queryset(request, Prompt.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Prompt]) -> None:
        for prompt in queryset.select_related("owner"):
            delete_prompt(user=prompt.owner, prompt_id=prompt.pk, actor=request.user)

    @admin.action(description=_("Share the selected prompts with everyone"), permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Prompt]) -> None:
        self._share(request, queryset, shared=True)

    @admin.action(description=_("Stop sharing the selected prompts"), permissions=["change"])
    def withdraw(self, request: HttpRequest, queryset: QuerySet[Prompt]) -> None:
        self._share(request, queryset, shared=False)

    def _share(self, request: HttpRequest, queryset: QuerySet[Prompt], *, shared: bool) -> None:
        for prompt in queryset.exclude(shared=shared):
            prompt.shared = shared
            prompt.save(update_fields=["shared", "updated_at"])
            record_sharing(request.user, prompt)
