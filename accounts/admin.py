"""Tokens in the admin: names, prefixes and dates; never the secret (only a hash exists)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "owner__username", "prefix")
    fields = ("owner", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("owner", "prefix", "created_at", "last_used_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
