"""Dictation and reading aloud (SPEC "Voice…"): `POST /audio/transcriptions` (a recording
→ its words) and `POST /audio/speech` (a message → its words read aloud, as WAV)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from ninja import File, Form, Router, Schema
from ninja.files import UploadedFile

from conversations.schemas import ObjectId
from conversations.selectors import get_message_for_user
from core.db_async import db_async
from core.errors import Invalid, TooLarge
from core.schemas import Input, errors

from . import services
from .speakable import speakable

router = Router(tags=["audio"])
ERRORS = errors(400, 401, 404, 413, 422, 429, 503)
_aget_message = db_async(get_message_for_user, close_serial=False)


class TranscriptOut(Schema):
    text: str


class SpeechIn(Input):
    message_id: ObjectId


@router.post("/audio/transcriptions", response={200: TranscriptOut, **ERRORS})
async def transcribe(
    request: HttpRequest, file: File[UploadedFile], language: Form[str | None] = None
):
    """The words of a recording (multipart `file`: WebM, Ogg, MP4, MP3, WAV or FLAC; at most
    CHAT_STT_MAX_SECONDS and 25 MB), as the model server's `/audio/transcriptions` hears
    them. 404 while dictation is off (CHAT_STT_MODEL unset)."""
    if file.size is not None and file.size > services.MAX_UPLOAD_BYTES:
        raise TooLarge(_("A recording can be at most 25 MB."))
    data = file.read(services.MAX_UPLOAD_BYTES + 1)
    if language is not None and language not in ("en", "ko"):
        raise Invalid(_("language must be en or ko."))
    return {"text": await services.transcribe(data, language=language)}


@router.post(
    "/audio/speech",
    response={200: None, **ERRORS},
    openapi_extra={"responses": {"200": {"content": {"audio/wav": {}}}}},
)
async def speech(request: HttpRequest, payload: SpeechIn):
    """A message of yours read aloud by the model server's `/audio/speech` (WAV): its words
    without Markdown. 404 while the server does not read aloud (CHAT_TTS_MODEL unset)."""
    message = await _aget_message(user=request.auth, message_id=payload.message_id)
    audio = await services.speak(speakable(message.content))
    return HttpResponse(audio, content_type="audio/wav")
