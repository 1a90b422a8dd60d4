"""Dictation and reading aloud through the model server's audio endpoints (OpenAI's API,
whisper.cpp's server, faster-whisper servers and LocalAI speak them).

Both calls are awaited (an async view): a transcription may take seconds, and a sync view
would hold the one thread Django runs sync views on under ASGI.
"""

from __future__ import annotations

import io
import logging
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai
from django.conf import settings
from django.utils.translation import gettext as _

from core.errors import Invalid, LlmUnavailable, NotFound, TooLarge

logger = logging.getLogger(__name__)

MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # OpenAI's own limit for a transcription
# A compressed recording (Opus, AAC, MP3: what browsers record) takes well under this many
# bytes a second; a file larger than the longest recording allowed at that rate is refused
# without sending it. WAV says its own length and is judged by it.
COMPRESSED_BYTES_PER_SECOND = 32_000
MIN_WAV_RATE = 1000  # samples a second: below it a header is damaged, not a recording
REQUEST_TIMEOUT = 120.0
# Magic numbers of the audio containers people send, and the name each goes out as.
CONTAINERS = (
    (b"\x1aE\xdf\xa3", "audio.webm", "audio/webm"),  # WebM/Matroska: Chrome, Firefox
    (b"OggS", "audio.ogg", "audio/ogg"),
    (b"fLaC", "audio.flac", "audio/flac"),
    (b"ID3", "audio.mp3", "audio/mpeg"),
    (b"\xff\xfb", "audio.mp3", "audio/mpeg"),
    (b"\xff\xf3", "audio.mp3", "audio/mpeg"),
)


def dictation_on() -> bool:
    return bool(settings.CHAT_STT_MODEL)


def server_reads_aloud() -> bool:
    return bool(settings.CHAT_TTS_MODEL)


def _client() -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=settings.OPENAI_BASE_URL,
        api_key=settings.OPENAI_API_KEY or "none",
        timeout=REQUEST_TIMEOUT,
        max_retries=1,
    )


def audio_kind(head: bytes) -> tuple[str, str] | None:
    """The file name and type to send for audio starting with `head`; None: not audio."""
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio.wav", "audio/wav"
    if head[4:8] == b"ftyp":  # MP4/M4A: Safari
        return "audio.m4a", "audio/mp4"
    for magic, name, kind in CONTAINERS:
        if head.startswith(magic):
            return name, kind
    return None


def check_recording(data: bytes) -> tuple[str, str]:
    """Refuse what is not a recording this site takes; return the name and type to send."""
    limit = settings.CHAT_STT_MAX_SECONDS
    if len(data) > MAX_UPLOAD_BYTES:
        raise TooLarge(_("A recording can be at most 25 MB."))
    kind = audio_kind(data[:16])
    if kind is None:
        raise Invalid(_("This is not a recording (WebM, Ogg, MP4, MP3, WAV or FLAC)."))
    if kind[1] == "audio/wav":
        try:
            with wave.open(io.BytesIO(data)) as file:
                rate, frame = file.getframerate(), file.getsampwidth() * file.getnchannels()
                # The header's frame count may claim more than the file holds.
                frames = min(file.getnframes(), len(data) // max(1, frame))
        except (wave.Error, EOFError):
            raise Invalid(_("This WAV file cannot be read.")) from None
        if rate < MIN_WAV_RATE or frame < 1:
            raise Invalid(_("This WAV file cannot be read."))
        seconds = frames / rate
    else:
        seconds = len(data) / COMPRESSED_BYTES_PER_SECOND
    if seconds > limit:
        raise TooLarge(
            _("A recording can be at most %(seconds)s seconds long.") % {"seconds": limit}
        )
    return kind


async def transcribe(data: bytes, *, language: str | None = None) -> str:
    """The words said in the recording `data`, as the model server hears them."""
    if not dictation_on():
        raise NotFound(_("Dictation is not set up on this server."))
    name, kind = check_recording(data)
    extra: dict[str, Any] = {"language": language} if language else {}
    with _model_server(
        missing=_("The model server cannot transcribe audio (it has no /audio/transcriptions)."),
        failed=_("The model server could not transcribe the recording."),
    ):
        answer = await _client().audio.transcriptions.create(
            model=settings.CHAT_STT_MODEL, file=(name, data, kind), **extra
        )
    return str(getattr(answer, "text", "") or "").strip()


async def speak(text: str) -> bytes:
    """`text` read aloud by the model server, as WAV."""
    if not server_reads_aloud():
        raise NotFound(_("Reading aloud by the server is off: the browser reads instead."))
    if not text.strip():
        raise Invalid(_("There are no words to read in this message."))
    with _model_server(
        missing=_("The model server cannot read aloud (it has no /audio/speech)."),
        failed=_("The model server could not read the message aloud."),
    ):
        answer = await _client().audio.speech.create(
            model=settings.CHAT_TTS_MODEL,
            voice=settings.CHAT_TTS_VOICE,
            input=text,
            response_format="wav",
        )
    return answer.content


@contextmanager
def _model_server(*, missing: str, failed: str) -> Iterator[None]:
    """A call to the model server, its failures said in words (503): `missing` when it has
    no such endpoint (404), `failed` for anything else (the reason goes to the log)."""
    try:
        yield
    except openai.NotFoundError:
        raise LlmUnavailable(missing) from None
    except openai.APIError as exc:
        logger.warning("audio request failed: %s", exc)
        raise LlmUnavailable(failed) from None
