"""Tokens in the admin: names, prefixes and dates; never the secret (only a hash exists)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest

from .deletion import delete_users
from .models import ApiToken

User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class AuditedUserAdmin(UserAdmin):
    """Django's user admin, its deletes audited with what went with each user."""

    def delete_model(self, request: HttpRequest, obj) -> None:
        delete_users(staff=request.user, users=[obj])

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        delete_users(staff=request.user, users=list(queryset))


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "owner__username", "prefix")
    fields = ("owner", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("owner", "prefix", "created_at", "last_used_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
