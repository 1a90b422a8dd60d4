"""Voice in the browser: a fake microphone (Chromium playing a WAV file) is dictated into
the message box through the model server's /audio/transcriptions, and a reply is read
aloud by its /audio/speech and played; the site without a server voice falls back to the
browser's speech synthesis."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.api.conftest import make_conversation
from tests.conftest import database_url_for_subprocesses, require_service
from tests.support.fake_audio import tone_wav
from tests.support.fake_openai import FakeOpenAI

from .conftest import CHROMIUM, LAUNCH_ARGS, serve_daphne

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def voice_site(django_db_setup, django_db_blocker, tmp_path_factory, browser):
    """Daphne pointed at the fake model server with dictation and a server voice on, and a
    Chromium whose microphone plays a WAV file (granted without a prompt)."""
    require_service(os.path.exists(CHROMIUM), f"Chromium at {CHROMIUM}")
    var = tmp_path_factory.mktemp("voice-var")
    speech = var / "speech.wav"
    speech.write_bytes(tone_wav(4.0, hertz=300))
    with django_db_blocker.unblock():
        database_url = database_url_for_subprocesses()
    with (
        FakeOpenAI(models=["fake-small"]) as fake,
        serve_daphne(
            var,
            database_url,
            OPENAI_API_KEY="test-key",
            OPENAI_BASE_URL=fake.base_url,
            CHAT_MODEL="fake-small",
            CHAT_STT_MODEL="whisper-1",
            CHAT_STT_MAX_SECONDS="3",
            CHAT_TTS_MODEL="tts-1",
        ) as url,
    ):
        # A Chromium of its own (the session's has no fake microphone), from the same
        # Playwright.
        with_mic = browser.browser_type.launch(
            executable_path=CHROMIUM,
            args=[
                *LAUNCH_ARGS,
                "--use-fake-device-for-media-stream",
                "--use-fake-ui-for-media-stream",
                f"--use-file-for-fake-audio-capture={speech}",
                "--autoplay-policy=no-user-gesture-required",
            ],
        )
        yield url, fake, with_mic
        with_mic.close()


def _page(browser, url, user, **extra):
    from django.conf import settings
    from django.test import Client

    context = browser.new_context(base_url=url, **extra)
    context.set_default_timeout(15_000)
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": url}])
    context.grant_permissions(["microphone"], origin=url)
    return context, context.new_page()


def test_dictation_records_the_microphone_and_puts_the_words_in_the_box(voice_site, alice):
    url, fake, browser = voice_site
    fake.audio.transcripts.append("부산 여행 계획을 세워줘")
    context, page = _page(browser, url, alice)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto("/")
    box = page.locator("#composer-input")
    box.fill("Please:")
    mic = page.get_by_role("button", name="Dictate")
    mic.click()
    stop = page.get_by_role("button", name="Stop dictating")
    expect(stop).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".mic-time")).to_have_text(re.compile(r"0:0[1-2]"))
    # Not stopped by hand: the recording ends at CHAT_STT_MAX_SECONDS (3 s here).
    expect(box).to_have_value("Please: 부산 여행 계획을 세워줘", timeout=20_000)
    expect(page.get_by_role("button", name="Dictate")).to_have_attribute("aria-pressed", "false")
    sent = fake.audio.requests[-1]
    assert sent["model"] == "whisper-1"
    assert sent["content_type"] == "audio/webm" and sent["head"] == b"\x1aE\xdf\xa3"
    assert sent["size"] > 1000  # seconds of real audio, not an empty file
    # Stopped by hand this time, on a phone: the words go after what is in the box.
    fake.audio.transcripts.append("and book the train")
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_role("button", name="Dictate").click()
    expect(page.get_by_role("button", name="Stop dictating")).to_be_visible()
    page.wait_for_timeout(1200)
    page.get_by_role("button", name="Stop dictating").click()
    expect(box).to_have_value("Please: 부산 여행 계획을 세워줘 and book the train", timeout=20_000)
    assert errors == []
    context.close()


def test_a_reply_is_read_aloud_by_the_server_and_stops_on_a_second_press(voice_site, alice):
    url, fake, browser = voice_site
    words = " ".join(["the", "beach"] * 40)  # 80 words: about 30 s of the fake's voice
    conversation = make_conversation(alice, contents=["Plan it", f"**Day one:** {words}."])
    context, page = _page(browser, url, alice)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"/conversations/{conversation.id}/")
    reply = page.locator("li.message.assistant").last
    reply.hover()
    speak = reply.get_by_role("button", name="Read aloud")
    speak.click()
    expect(reply.get_by_role("button", name="Stop reading")).to_have_attribute(
        "aria-pressed", "true"
    )
    for _ in range(100):  # the request is under way once the button says so
        spoken = [r for r in fake.audio.requests if r["path"] == "/audio/speech"]
        if spoken:
            break
        page.wait_for_timeout(100)
    assert spoken and spoken[-1]["input"] == f"Day one: {words}."
    expect(reply.get_by_role("button", name="Stop reading")).to_be_enabled()  # playing
    reply.get_by_role("button", name="Stop reading").click()
    expect(reply.get_by_role("button", name="Read aloud")).to_have_attribute(
        "aria-pressed", "false"
    )
    assert errors == []
    context.close()


def test_without_a_server_voice_the_browser_reads_and_without_dictation_no_mic(new_context, alice):
    """The offline site (no CHAT_TTS_MODEL, no CHAT_STT_MODEL): no microphone button; a
    reply is read by the browser's speech synthesis, in its language."""
    conversation = make_conversation(alice, contents=["여행", "부산은 **바다**가 좋아요."])
    page = new_context(alice).new_page()
    page.add_init_script(
        """
        window.__spoken = [];
        speechSynthesis.speak = (u) => { window.__spoken.push({ text: u.text, lang: u.lang }); };
        """
    )
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"/conversations/{conversation.id}/")
    expect(page.locator("#mic-button")).to_have_count(0)
    reply = page.locator("li.message.assistant").last
    reply.hover()
    reply.get_by_role("button", name="Read aloud").click()
    page.wait_for_function("window.__spoken.length > 0")
    spoken = page.evaluate("window.__spoken")
    assert spoken == [{"text": "부산은 바다가 좋아요.", "lang": "ko-KR"}], errors
    assert errors == []
