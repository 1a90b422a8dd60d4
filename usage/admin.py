"""Budgets in the admin: staff set a user's or a group's monthly tokens; each change is audited."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import transaction
from django.http import HttpRequest

from audit.models import AuditEntry
from audit.services import record

from .models import Budget


def _snapshot(budget: Budget | None) -> dict[str, Any] | None:
    if budget is None:
        return None
    return {
        "user_id": budget.user_id,
        "group_id": budget.group_id,
        "monthly_tokens": budget.monthly_tokens,
    }


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    list_display = ("__str__", "user", "group", "monthly_tokens", "updated_at")
    list_select_related = ("user", "group")
    search_fields = ("user__username", "group__name")
    autocomplete_fields = ("user", "group")
    fields = ("user", "group", "monthly_tokens")

    @transaction.atomic
    def save_model(self, request: HttpRequest, obj: Budget, form: Any, change: bool) -> None:
        before = _snapshot(Budget.objects.filter(pk=obj.pk).first()) if change else None
        super().save_model(request, obj, form, change)
        self._audit(request, obj, before, _snapshot(obj))

    @transaction.atomic
    def delete_model(self, request: HttpRequest, obj: Budget) -> None:
        before = _snapshot(obj)
        self._audit(request, obj, before, None)
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for budget in queryset:  # one audit entry per budget removed
            self.delete_model(request, budget)

    def _audit(self, request: HttpRequest, budget: Budget, before: Any, after: Any) -> None:
        record(
            actor=request.user,
            action=AuditEntry.Action.BUDGET_CHANGED,
            target=budget,
            detail={"before": before, "after": after},
        )
