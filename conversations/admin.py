"""Staff moderation: conversations, messages and feedback across all users."""

from __future__ import annotations

import contextlib

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from core.errors import NotFound
from text import sensitive

from . import moderation, services
from .admin_reports import ReportQueueMixin
from .models import MESSAGE_RECORD_FIELDS, Conversation, Message, MessageFeedback, Project, Share

MODERATION_CSS = {"all": ("css/moderation.css",)}


def report_mark(message: Message) -> str:
    """A flag with the reason on a reported message; nothing on the others."""
    if not message.is_flagged:
        return ""
    return format_html('<span class="reported-mark" title="{}">⚑</span>', message.flag_reason)


INLINE_MESSAGES = 50  # a conversation's page shows its newest; the message list has them all


class NewestMessages(BaseInlineFormSet):
    """The conversation's newest INLINE_MESSAGES, oldest first: an imported conversation of
    10,000 messages made a 19.5 MB page in 13 s when every message was listed."""

    def get_queryset(self) -> QuerySet[Message]:
        if not hasattr(self, "_newest"):
            every = super().get_queryset()
            newest = every.order_by("-sequence_number").values_list("pk", flat=True)
            self._newest = every.filter(pk__in=list(newest[:INLINE_MESSAGES]))
        return self._newest


class MessageInline(admin.TabularInline):
    model = Message
    formset = NewestMessages
    verbose_name_plural = _("Newest messages (every message is in the Messages list)")
    fields = ("sequence_number", "role", "content", "finish_reason", "tokens_used", "reported")
    readonly_fields = fields
    ordering = ("sequence_number",)
    extra = 0
    can_delete = False
    show_change_link = True

    class Media:
        css = MODERATION_CSS

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description=_("reported"), empty_value="")
    def reported(self, obj: Message) -> str:
        return report_mark(obj)


class ReportedFilter(admin.SimpleListFilter):
    """Conversations with messages their owner reported, flagged by staff, or neither."""

    title = _("reported")
    parameter_name = "reported"

    def lookups(self, request, model_admin):
        return [
            ("messages", _("Has reported messages")),
            ("staff", _("Flagged by staff")),
            ("none", _("None")),
        ]

    def queryset(self, request, queryset):
        if self.value() == "messages":
            return queryset.filter(moderation.has_reported_messages())
        if self.value() == "staff":
            return queryset.filter(is_flagged=True)
        if self.value() == "none":
            return queryset.filter(is_flagged=False).exclude(moderation.has_reported_messages())
        return queryset


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = (
        "title_or_id",
        "created_by",
        "status",
        "message_count",
        "last_message_at",
        "reported",
    )
    list_filter = ("status", ReportedFilter, "service_id", "created_at")
    search_fields = ("title", "created_by__username", "messages__content")
    readonly_fields = (
        "id",
        "created_by",
        "message_count",
        "total_tokens_used",
        "created_at",
        "updated_at",
        "last_message_at",
        "parent_conversation",
        "forked_from_message",
        "summary_at",
        # Shown, not chosen: an editable one lists every message of the site.
        "current_message",
        "summary_through",
        "last_sequence_number",
    )
    raw_id_fields = ("project",)
    inlines = (MessageInline,)
    actions = ("archive", "flag", "unflag")
    list_select_related = ("created_by",)
    date_hierarchy = "created_at"
    show_full_result_count = False

    class Media:
        css = MODERATION_CSS

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        return moderation.with_reported_counts(super().get_queryset(request))

    def delete_model(self, request: HttpRequest, obj: Conversation) -> None:
        moderation.delete_conversation(staff=request.user, conversation=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        for conversation in queryset.select_related("created_by"):
            moderation.delete_conversation(staff=request.user, conversation=conversation)

    @admin.display(description=_("reported"), ordering="reported_count", empty_value="")
    def reported(self, obj: Conversation) -> str:
        """Marks only where there is something: the number of reported messages (linked to
        them in the queue) and a staff flag; nothing on a conversation nobody reported."""
        marks = []
        if obj.reported_count:
            url = reverse("admin:conversations_message_reports") + f"?conversation={obj.pk}"
            label = ngettext(
                "%(count)d reported message", "%(count)d reported messages", obj.reported_count
            ) % {"count": obj.reported_count}
            marks.append(
                format_html(
                    '<a class="reported-mark" href="{}" title="{}">⚑ {}</a>',
                    url,
                    label,
                    obj.reported_count,
                )
            )
        if obj.is_flagged:
            reason = obj.flag_reason or _("Flagged by staff")
            marks.append(
                format_html(
                    '<span class="reported-mark is-staff" title="{}">⚑ {}</span>',
                    reason,
                    _("staff"),
                )
            )
        return format_html_join(" ", "{}", ((mark,) for mark in marks))

    @admin.display(description=_("title"), ordering="title")
    def title_or_id(self, obj: Conversation) -> str:
        return obj.title or str(obj.id)

    @admin.action(description=_("Archive selected conversations"))
    def archive(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        for conversation in queryset:
            services.archive_conversation(conversation=conversation)
        self.message_user(request, _("Archived."), messages.SUCCESS)

    @admin.action(description=_("Flag selected conversations"))
    def flag(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        queryset.update(is_flagged=True, flag_reason="Flagged by staff")
        self.message_user(request, _("Flagged."), messages.SUCCESS)

    @admin.action(description=_("Unflag selected conversations"))
    def unflag(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        queryset.update(is_flagged=False, flag_reason="")
        self.message_user(request, _("Unflagged."), messages.SUCCESS)


class FeedbackFilter(admin.SimpleListFilter):
    title = _("feedback")
    parameter_name = "feedback"

    def lookups(self, request, model_admin):
        return [("up", _("Helpful")), ("down", _("Not helpful")), ("none", _("None"))]

    def queryset(self, request, queryset):
        if self.value() in {"up", "down"}:
            return queryset.filter(feedback__rating=self.value()).distinct()
        if self.value() == "none":
            return queryset.filter(feedback__isnull=True)
        return queryset


class SensitiveFilter(admin.SimpleListFilter):
    """Messages the sender stored although they hold sensitive information
    (`metadata.sensitive` lists the kinds), by kind."""

    title = _("sensitive information")
    parameter_name = "sensitive"

    def lookups(self, request, model_admin):
        kinds = [(kind, kind) for kind in sensitive.KINDS]
        return [("any", _("Any kind")), *kinds, ("none", _("None"))]

    def queryset(self, request, queryset):
        if self.value() == "any":
            return queryset.filter(metadata__has_key="sensitive")
        if self.value() == "none":
            return queryset.exclude(metadata__has_key="sensitive")
        if self.value() in sensitive.KINDS:
            # The kinds' JSON text holds '"card"' (both backends; no jsonb @> on SQLite).
            return queryset.filter(metadata__sensitive__icontains=f'"{self.value()}"')
        return queryset


@admin.register(Message)
class MessageAdmin(ReportQueueMixin, admin.ModelAdmin):
    list_display = ("short_content", "conversation", "role", "sequence_number", "reported")
    list_filter = ("role", FeedbackFilter, SensitiveFilter, "is_flagged", "finish_reason")
    search_fields = ("content",)
    readonly_fields = (
        "id",
        "conversation",
        *MESSAGE_RECORD_FIELDS,
        "client_id",
        "created_by",
        "created_at",
    )
    list_select_related = ("conversation",)
    show_full_result_count = False

    class Media:
        css = MODERATION_CSS

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Message) -> None:
        moderation.delete_message(staff=request.user, message_id=obj.pk)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Message]) -> None:
        for pk in queryset.values_list("pk", flat=True):
            # One under another selected message went with that one's subtree already.
            with contextlib.suppress(NotFound):
                moderation.delete_message(staff=request.user, message_id=pk)

    @admin.display(description=_("content"))
    def short_content(self, obj: Message) -> str:
        return obj.content[:80]

    @admin.display(description=_("reported"), ordering="is_flagged", empty_value="")
    def reported(self, obj: Message) -> str:
        return report_mark(obj)


@admin.register(MessageFeedback)
class MessageFeedbackAdmin(admin.ModelAdmin):
    list_display = ("message", "user", "rating", "created_at")
    list_filter = ("rating",)
    raw_id_fields = ("message",)
    readonly_fields = (
        "user", "message", "rating", "reasons", "comment", "created_at", "updated_at"
    )  # fmt: skip


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "created_at")
    search_fields = ("name", "owner__username")


@admin.register(Share)
class ShareAdmin(admin.ModelAdmin):
    """Share links: staff can see what is public and revoke it (delete)."""

    list_display = ("title", "conversation", "created_by", "created_at")
    list_select_related = ("conversation", "created_by")
    search_fields = ("title", "created_by__username")
    readonly_fields = ("conversation", "created_by", "token", "title", "message_ids", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


# Users: Django's admin, with deletes audited (moderation.delete_users) — here, where the
# conversations, documents and memories that go with a user are known.
User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class AuditedUserAdmin(UserAdmin):
    """Django's user admin, its deletes audited with what went with each user."""

    def delete_model(self, request: HttpRequest, obj) -> None:
        moderation.delete_users(staff=request.user, users=[obj])

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        moderation.delete_users(staff=request.user, users=list(queryset))
