"""The conversation page's download: a conversation as Markdown, JSON, text, CSV or PDF."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from conversations import selectors
from core.errors import page_errors

from . import exports
from .api import export_response
from .models import ExportJob


@require_GET
def export(request: HttpRequest, conversation_id) -> StreamingHttpResponse:
    """Download a conversation in one of the export formats (an attachment)."""
    with page_errors():
        conversation = selectors.get_conversation_for_user(
            user=request.user, conversation_id=conversation_id
        )
    fmt = request.GET.get("format", "markdown")
    if fmt not in exports.FORMATS:
        return HttpResponseBadRequest(_("format must be markdown, json, text, csv or pdf"))
    include_metadata = request.GET.get("include_metadata", "") in {"1", "true", "yes", "on"}
    return export_response(conversation, fmt, include_metadata)


def data(request: HttpRequest) -> HttpResponse:
    """Settings → Your data: export every conversation as Markdown files in a zip."""
    jobs = ExportJob.objects.filter(owner_id=request.user.pk)[:5]
    return render(request, "transfers/data.html", {"jobs": jobs})
