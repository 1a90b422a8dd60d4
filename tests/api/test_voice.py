"""Dictation and reading aloud through the model server's audio endpoints (SPEC "Voice…"):
what is sent, what comes back, and every refusal before anything is sent."""

from __future__ import annotations

import io
import struct
import wave

import pytest

from tests.support.fake_audio import tone_wav
from tests.support.fake_openai import FakeOpenAI
from voice.speakable import speakable

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(settings):
    with FakeOpenAI() as server:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = server.base_url
        settings.CHAT_STT_MODEL = "whisper-1"
        settings.CHAT_TTS_MODEL = "tts-1"
        settings.CHAT_TTS_VOICE = "nova"
        yield server


def _post_audio(api, data: bytes, name: str = "clip.webm", **fields):
    return api.client.post(
        "/api/v1/audio/transcriptions",
        {"file": _named(data, name), **fields},
        headers=api.headers,
    )


def _named(data: bytes, name: str):
    file = io.BytesIO(data)
    file.name = name
    return file


def _wav_of(seconds: float, rate: int = 8000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(struct.pack("<h", 0) * int(rate * seconds))
    return out.getvalue()


WEBM = b"\x1aE\xdf\xa3" + b"\x00" * 4000  # a WebM container's start, as Chrome records it


def _wav_saying(offset: int, value: int, seconds: float = 1) -> bytes:
    """A short WAV whose header says `value` (4 bytes, little-endian) at `offset`: 24 is the
    sample rate, 40 the size of the data."""
    data = bytearray(_wav_of(seconds))
    data[offset : offset + 4] = struct.pack("<I", value)
    return bytes(data)


def test_a_recording_comes_back_as_its_words(api, fake):
    fake.audio.transcripts.append("부산 여행 계획을 세워줘")
    response = _post_audio(api, tone_wav(1.5), "dictation.wav", language="ko")
    assert response.status_code == 200, response.content
    assert response.json() == {"text": "부산 여행 계획을 세워줘"}
    [sent] = fake.audio.requests
    assert sent["model"] == "whisper-1" and sent["fields"]["language"] == "ko"
    assert (sent["file_name"], sent["content_type"]) == ("audio.wav", "audio/wav")
    assert sent["head"] == b"RIFF"
    webm = _post_audio(api, WEBM)
    assert webm.status_code == 200
    assert fake.audio.requests[-1]["content_type"] == "audio/webm"  # told by its bytes


@pytest.mark.parametrize(
    "data, status",
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, 422),  # not audio, whatever its name
        (b"hello, this is text", 422),
        (b"", 422),
        (b"RIFF\x00\x00\x00\x00WAVEbroken", 422),
        (_wav_saying(24, 0), 422),  # no sample rate: it was judged 16,000 s long (413)
        (None, 413),  # a WAV longer than CHAT_STT_MAX_SECONDS
        (b"OggS" + b"\x00" * (121 * 32_000), 413),  # compressed, too big to be 120 s
    ],
    ids=["png", "text", "empty", "broken-wav", "rateless-wav", "long-wav", "long-ogg"],
)
def test_what_is_not_a_short_recording_is_refused_before_anything_is_sent(api, fake, data, status):
    response = _post_audio(api, _wav_of(121) if data is None else data, "clip.wav")
    assert response.status_code == status, response.content
    assert response.json()["error"]["message"]
    assert fake.audio.requests == []


def test_a_wav_whose_header_claims_more_than_it_holds_is_judged_by_what_it_holds(api, fake):
    fake.audio.transcripts.append("hello")
    response = _post_audio(api, _wav_saying(40, 0x7FFFFFFF), "clip.wav")  # "2**31 bytes"
    assert response.status_code == 200, response.content  # it holds one second (was 413)
    assert len(fake.audio.requests) == 1


def test_dictation_off_or_a_server_without_it_says_so(api, fake, settings):
    fake.audio.enabled = False  # llama.cpp's server: no /audio/transcriptions
    response = _post_audio(api, WEBM)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "llm_unavailable"
    assert "/audio/transcriptions" in response.json()["error"]["message"]
    settings.CHAT_STT_MODEL = ""
    off = _post_audio(api, WEBM)
    assert off.status_code == 404 and "Dictation" in off.json()["error"]["message"]
    assert api.get("/me/settings").json()["stt"] is False
    assert _post_audio(api, WEBM, language="fr").status_code in (404, 422)


def test_a_reply_is_read_aloud_as_words_by_the_servers_voice(api, bob_api, fake, alice):
    reply = "## Plan\n\n**Day one:** the beach.\n\n```python\nprint(1)\n```\n\nCost: $x^2$."
    conversation = make_conversation(alice, contents=["Plan it", reply])
    message_id = str(conversation.messages.get(sequence_number=2).pk)
    response = api.client.post(
        "/api/v1/audio/speech",
        {"message_id": message_id},
        content_type="application/json",
        headers=api.headers,
    )
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "audio/wav"
    with wave.open(io.BytesIO(response.content)) as audio:
        assert audio.getnframes() > 0  # real audio, as the server sent it
    [sent] = fake.audio.requests
    assert (sent["model"], sent["voice"], sent["response_format"]) == ("tts-1", "nova", "wav")
    assert sent["input"] == "Plan\nDay one: the beach.\nA code block in python.\nCost: a formula."
    assert api.get("/me/settings").json()["tts"] is True
    others = bob_api.client.post(
        "/api/v1/audio/speech",
        {"message_id": message_id},
        content_type="application/json",
        headers=bob_api.headers,
    )
    assert others.status_code == 404
    assert len(fake.audio.requests) == 1


def test_speakable_words_leave_markdown_out():
    text = speakable(
        "# Title\n\nSome *stress* and `code` and a [link](https://x.example).\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n$$E=mc^2$$\n\n```\nx\n```"
    )
    assert text.splitlines() == [
        "Title",
        "Some stress and code and a link.",
        "a",
        "b",
        "1",
        "2",
        "one",
        "two",
        "A formula.",
        "A code block.",
    ]
    assert len(speakable("word " * 2000)) == 4096
