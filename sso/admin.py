"""Staff see the links and may remove one (written to the audit log); nobody edits a link."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from . import services
from .models import SsoLink


@admin.register(SsoLink)
class SsoLinkAdmin(admin.ModelAdmin):
    list_display = ("user", "issuer", "subject", "created_at", "last_login_at")
    list_select_related = ("user",)
    search_fields = ("user__username", "subject")
    list_filter = ("issuer",)
    readonly_fields = ("user", "issuer", "subject", "created_at", "last_login_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # links are made by a sign-in only

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: SsoLink) -> None:
        services.unlink(actor=request.user, link=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[SsoLink]) -> None:
        for link in queryset.select_related("user"):
            services.unlink(actor=request.user, link=link)
