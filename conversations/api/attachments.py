"""Endpoints on attachments: upload to a conversation, read the file (SPEC "Attachments")."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, HttpRequest
from django.utils.translation import gettext as _
from ninja import File, Router, Status
from ninja.files import UploadedFile

from conversations import attachments
from conversations.serializers import attachment_to_dict
from core.errors import TooLarge
from core.schemas import errors
from core.streaming import attachment_header

from .schemas import AttachmentOut

router = Router(tags=["attachments"])
ERRORS = errors(400, 401, 404, 409, 413, 422, 429)


@router.post(
    "/conversations/{conversation_id}/attachments", response={201: AttachmentOut, **ERRORS}
)
def upload_attachment(request: HttpRequest, conversation_id: str, file: File[UploadedFile]):
    """Upload an image (PNG, JPEG, WebP, GIF) or a document (.txt, .md, .pdf) to send with
    a message of this conversation (`attachments` of message.send / POST …/messages)."""
    limit = settings.ATTACHMENT_MAX_BYTES
    if file.size is not None and file.size > limit:
        raise TooLarge(_("The file is larger than %(limit)s bytes.") % {"limit": limit})
    attachment = attachments.upload(
        user=request.auth,
        conversation_id=conversation_id,
        name=file.name or "",
        data=file.read(limit + 1),
    )
    return Status(201, attachment_to_dict(attachment))


@router.get(
    "/attachments/{attachment_id}",
    response={200: None, **ERRORS},
    openapi_extra={"responses": {"200": {"description": "the file"}}},
)
def read_attachment(request: HttpRequest, attachment_id: str):
    """The file, to its owner: images inline, anything else as a download."""
    attachment = attachments.get_for_user(user=request.auth, attachment_id=attachment_id)
    inline = attachment.kind == "image"
    response = FileResponse(attachment.file.open("rb"), content_type=attachment.content_type)
    response["Content-Disposition"] = attachment_header(attachment.name, inline=inline)
    response["Cache-Control"] = "private, max-age=3600"
    # An uploaded file never runs as a page of this site, whatever it holds.
    response["Content-Security-Policy"] = "default-src 'none'; img-src 'self'; sandbox"
    return response
