"""Attachments: files put in the message box, then sent with a message (SPEC "Attachments").

An upload is checked by its content, not its name: an image must open in Pillow as PNG,
JPEG, WebP or GIF; a document is .txt/.md/.pdf and its text is extracted with the
knowledge base's code. It belongs to one conversation and its uploader, and has no
message until one is sent with it (`claim`, inside the send's transaction).
"""

from __future__ import annotations

import base64
import io
import re
import unicodedata
import warnings
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core import rls
from core.errors import Invalid, NotFound, TooLarge
from core.ids import parse_uuid
from knowledge.models import Document
from knowledge.services import upload_document

from .models import Attachment, Message
from .selectors import get_conversation_for_user, owned_by
from .serializers import attachment_to_dict

IMAGE_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
DOCUMENT_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".pdf": "application/pdf"}
VISION_MAX_SIDE = 1568  # what vision models take without cutting detail (and not much more)
MAX_PIXELS = 40_000_000  # a decompression bomb is refused before it is decoded
UNSENT_KEPT = timedelta(days=1)


def clean_name(name: str) -> str:
    """Return a file name safe to store and to show: no path, no control or bidi characters."""
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if unicodedata.category(c)[0] != "C")
    name = re.sub(r"\s+", " ", name).strip(" .")
    return name[:200] or "file"


def _image_type(data: bytes) -> str | None:
    """Return the MIME type of an image Pillow can open in a format we keep, else None."""
    from PIL import Image, UnidentifiedImageError

    too_many = Invalid(_("The image is too large in pixels."), code="unsupported_type")
    try:
        with warnings.catch_warnings():
            # Pillow only warns between its limit and twice it: make that a refusal too.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > MAX_PIXELS:
                    raise too_many
                image.verify()
                return IMAGE_FORMATS.get(image.format or "")
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise too_many from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None


@transaction.atomic
def upload(*, user: Any, conversation_id: Any, name: str, data: bytes) -> Attachment:
    """Store a file for the user's conversation; refuse what is too large or not a
    supported image or document."""
    conversation = get_conversation_for_user(user=user, conversation_id=conversation_id)
    limit = settings.ATTACHMENT_MAX_BYTES
    if len(data) > limit:
        raise TooLarge(_("The file is larger than %(limit)s bytes.") % {"limit": limit})
    if not data:
        raise Invalid(_("The file is empty."), code="empty_file")
    name = clean_name(name)
    content_type = _image_type(data)
    if content_type is not None:
        kind = Attachment.Kind.IMAGE
    else:
        suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
        if suffix not in DOCUMENT_TYPES:
            raise Invalid(
                _("Attach an image (PNG, JPEG, WebP, GIF) or a document (.txt, .md, .pdf)."),
                code="unsupported_type",
            )
        # Split and indexed like the knowledge base, searched in this conversation only.
        document = upload_document(
            user=user, filename=name, data=data, title=name, scope=conversation.pk
        )
        kind, content_type = Attachment.Kind.DOCUMENT, DOCUMENT_TYPES[suffix]
    attachment = Attachment(
        conversation=conversation,
        created_by=user,
        name=name,
        kind=kind,
        content_type=content_type,
        size_bytes=len(data),
        document=document if kind == Attachment.Kind.DOCUMENT else None,
    )
    # Stored under a random name: the user's name is only ever shown, never a path.
    attachment.file.save(f"{attachment.id.hex}", ContentFile(data), save=False)
    attachment.save()
    return attachment


def get_for_user(*, user: Any, attachment_id: Any) -> Attachment:
    """Return the user's attachment, or NotFound (someone else's is missing too)."""
    pk = parse_uuid(attachment_id)
    found = (
        Attachment.objects.filter(pk=pk, conversation__in=owned_by(user)).first()
        if pk is not None
        else None
    )
    if found is None:
        raise NotFound(_("Attachment not found."))
    return found


def claim(*, conversation_id: Any, user: Any, ids: list[Any], message: Message) -> list[Attachment]:
    """Give the unsent attachments `ids` of this conversation to `message` (the caller's
    transaction holds the conversation's lock); NotFound when one is not such."""
    if not ids:
        return []
    rows = list(
        Attachment.objects.select_for_update().filter(
            pk__in=ids, conversation_id=conversation_id, created_by=user, message=None
        )
    )
    if len(rows) != len(ids):
        raise NotFound(_("An attachment is not an unsent file of this conversation."))
    Attachment.objects.filter(pk__in=ids).update(message=message)
    order = {pk: i for i, pk in enumerate(ids)}
    rows.sort(key=lambda a: order[a.pk])
    for row in rows:
        row.message = message
    message.attachment_list = [attachment_to_dict(a) for a in rows]
    return rows


def keep_generated(message: Message, images: list[dict[str, Any]]) -> list[Attachment]:
    """Store the images a tool made for a reply (`{name, content_type, data_base64}`) as
    its attachments, owned by the conversation's owner; what is not a real image of a kind
    we keep, or is too large, is left out."""
    kept = []
    for image in images:
        try:
            data = base64.b64decode(image.get("data_base64") or "", validate=True)
        except ValueError:  # binascii.Error is one
            continue
        if not data or len(data) > settings.ATTACHMENT_MAX_BYTES:
            continue
        try:
            content_type = _image_type(data)
        except Invalid:  # too many pixels
            continue
        if content_type is None:
            continue
        attachment = Attachment(
            conversation_id=message.conversation_id,
            message=message,
            created_by_id=message.conversation.created_by_id,
            name=clean_name(str(image.get("name") or "image")),
            kind=Attachment.Kind.IMAGE,
            content_type=content_type,
            size_bytes=len(data),
        )
        attachment.file.save(f"{attachment.id.hex}", ContentFile(data), save=False)
        attachment.save()
        kept.append(attachment)
    message.attachment_list = [attachment_to_dict(a) for a in kept]
    return kept


def image_data_url(attachment: Attachment) -> str:
    """The image as a data URL a vision model takes, its longer side at most VISION_MAX_SIDE."""
    from PIL import Image

    with attachment.file.open("rb") as file, Image.open(file) as image:
        image.load()
        if max(image.size) > VISION_MAX_SIDE:
            image.thumbnail((VISION_MAX_SIDE, VISION_MAX_SIDE))
        if image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        out = io.BytesIO()
        image.save(out, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode()


@rls.maintenance()  # every user's unsent files
def purge_unsent(*, now: Any = None) -> int:
    """Delete attachments never sent with a message and older than a day (files follow)."""
    cutoff = (now or timezone.now()) - UNSENT_KEPT
    deleted, _ = Attachment.objects.filter(message=None, created_at__lt=cutoff).delete()
    return deleted


def remove_file_after_delete(sender: Any, instance: Attachment, **_: Any) -> None:
    """post_delete: remove the file once the deletion is committed (a rollback keeps it),
    and the document the knowledge base made of it."""
    if instance.document_id is not None:
        Document.objects.filter(pk=instance.document_id).delete()
    storage, name = instance.file.storage, instance.file.name
    if name:
        transaction.on_commit(lambda: storage.delete(name))
