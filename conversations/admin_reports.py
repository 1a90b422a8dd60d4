"""The moderation queue in the admin: reported messages in context, dismissed or deleted.

A mixin for MessageAdmin: its URLs live under /admin/conversations/message/reports/, in the
admin's maintenance scope (accounts/middleware.py); the admin's own login and CSRF checks
guard them, and the model's permissions decide who may dismiss (change) or delete.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.errors import Conflict, NotFound
from core.ids import parse_uuid

from . import moderation
from .models import Conversation
from .tree import Tree

REPORTS_PER_PAGE = 20


class ReportQueueMixin:
    """Adds the queue of reported messages and its two actions to a ModelAdmin."""

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        return [
            path("reports/", wrap(self.reports_view), name="conversations_message_reports"),
            path(
                "reports/<uuid:message_id>/dismiss/",
                wrap(require_POST(self.report_dismiss_view)),
                name="conversations_message_report_dismiss",
            ),
            path(
                "reports/<uuid:message_id>/delete/",
                wrap(self.report_delete_view),
                name="conversations_message_report_delete",
            ),
            *super().get_urls(),
        ]

    def _context(self, request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": title,
            "can_dismiss": self.has_change_permission(request),
            "can_delete": self.has_delete_permission(request),
            **extra,
        }

    def reports_view(self, request: HttpRequest) -> HttpResponse:
        """List the reported messages, newest report first, each with its neighbours."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        reports, conversation = moderation.reported_messages(), None
        if "conversation" in request.GET:
            pk = parse_uuid(request.GET["conversation"])
            if pk is None:
                return HttpResponseBadRequest(_("Not a conversation id."))
            conversation = get_object_or_404(Conversation, pk=pk)
            reports = reports.filter(conversation=conversation)
        page = Paginator(reports, REPORTS_PER_PAGE).get_page(request.GET.get("page"))
        context = self._context(
            request,
            _("Reported messages"),
            reports=moderation.in_context(list(page)),
            page_obj=page,
            conversation=conversation,
        )
        return TemplateResponse(request, "admin/conversations/reports.html", context)

    def _back(self, request: HttpRequest) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:conversations_message_reports"))

    def report_dismiss_view(self, request: HttpRequest, message_id: Any) -> HttpResponse:
        """Clear a report and keep the message (POST)."""
        if not self.has_change_permission(request):
            raise PermissionDenied
        try:
            moderation.dismiss_report(staff=request.user, message_id=message_id)
        except NotFound:
            self.message_user(request, _("That report was already handled."), messages.WARNING)
        else:
            self.message_user(request, _("Report dismissed; the message stays."), messages.SUCCESS)
        return self._back(request)

    def report_delete_view(self, request: HttpRequest, message_id: Any) -> HttpResponse:
        """Ask to confirm (GET), then delete the message and its subtree (POST)."""
        if not self.has_delete_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            return self._delete_reported(request, message_id)
        try:
            message = moderation.get_reported_message(message_id)
        except NotFound:
            self.message_user(request, _("That report was already handled."), messages.WARNING)
            return self._back(request)
        [report] = moderation.in_context([message])
        under = len(Tree.of(message.conversation_id).subtree(message.pk)) - 1
        context = self._context(request, _("Delete the reported message?"), report=report)
        context["under"] = under
        return TemplateResponse(request, "admin/conversations/report_delete.html", context)

    def _delete_reported(self, request: HttpRequest, message_id: Any) -> HttpResponse:
        try:
            moderation.delete_message(staff=request.user, message_id=message_id)
        except NotFound:
            self.message_user(request, _("That message is already gone."), messages.WARNING)
        except Conflict:
            self.message_user(
                request,
                _("A reply is being written under this message; try again when it ends."),
                messages.ERROR,
            )
        else:
            self.message_user(request, _("Message deleted."), messages.SUCCESS)
        return self._back(request)
