"""The conversation page's download: a conversation as Markdown, JSON or text."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponseBadRequest, StreamingHttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from conversations import selectors
from core.errors import NotFound

from . import exports
from .api import export_response


@require_GET
def export(request: HttpRequest, conversation_id) -> StreamingHttpResponse:
    """Download a conversation as Markdown, JSON or text (attachment, streamed)."""
    try:
        conversation = selectors.get_conversation_for_user(
            user=request.user, conversation_id=conversation_id
        )
    except NotFound as exc:
        raise Http404(exc.message) from None
    fmt = request.GET.get("format", "markdown")
    if fmt not in exports.FORMATS:
        return HttpResponseBadRequest(_("format must be markdown, json or text"))
    include_metadata = request.GET.get("include_metadata", "") in {"1", "true", "yes", "on"}
    return export_response(conversation, fmt, include_metadata)
