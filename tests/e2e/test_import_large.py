"""In the browser: a large import file is read in the background (202 and a job, read by the
worker beside the server as bin/run has it): the page says it is importing, then shows what
came and names what was left out, as for a small file; a large file that cannot be read is
explained in people's words."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from conversations.models import Conversation
from transfers.models import ImportJob

from .conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).parents[1] / "conversations" / "import_fixtures"
DAMAGED = (FIXTURES / "chatgpt_one_damaged.json").read_bytes()  # 4 conversations, 1 broken
# Past CHAT_IMPORT_INLINE_BYTES as the server has it (its default). The same server as the
# other browser tests: every worker on the test database must see the stored upload.
LARGE = 4 * 1024 * 1024 + 1


def large(data: bytes) -> bytes:
    """`data` grown past the threshold with whitespace after it (read as it was)."""
    return data + b" " * (LARGE - len(data))


def choose(page, name: str, data: bytes) -> None:
    page.set_input_files(
        "#import-file", files=[{"name": name, "mimeType": "application/json", "buffer": data}]
    )


def test_a_large_file_is_imported_in_the_background(new_context, alice, page_errors):
    page = new_context(alice, locale="ko-KR").new_page()
    watch(page, page_errors)
    page.goto("/conversations/")
    choose(page, "conversations.json", large(DAMAGED))
    progress = page.locator("#import-progress")
    expect(progress).to_have_text(
        "conversations.json 가져오는 중… 큰 파일이라 시간이 걸립니다. 이 페이지를 떠나도 됩니다."
    )
    report = page.locator("#import-report")
    expect(report).to_be_visible(timeout=30_000)
    expect(progress).to_be_hidden()
    expect(report.locator("h2")).to_have_text("대화 3개를 가져왔습니다.")
    expect(report.locator(".import-skipped li")).to_have_text(["Broken entry"])
    report.get_by_role("button").click()
    page.wait_for_load_state("load")
    expect(page.get_by_role("link", name="Train times").first).to_be_visible(timeout=10_000)
    assert Conversation.objects.filter(created_by=alice).count() == 3
    job = ImportJob.objects.get(owner=alice)
    assert job.status == ImportJob.Status.READY and not job.file  # its upload deleted
    assert page_errors == {"errors": [], "dialogs": []}


def test_a_large_file_that_cannot_be_read_is_explained(new_context, alice, page_errors):
    page = new_context(alice).new_page()
    watch(page, page_errors)
    page.goto("/conversations/")
    choose(page, "broken.json", large(b'{"format": "chatsite.conversation", "version": 1, '))
    expect(page.locator(".toast").last).to_have_text(
        "This file cannot be imported: it is not an export this site can read,"
        " or part of it is damaged.",
        timeout=30_000,
    )
    expect(page.locator("#import-progress")).to_be_hidden()
    job = ImportJob.objects.get(owner=alice)
    assert (job.status, job.error_code) == (ImportJob.Status.FAILED, "invalid_import")
    assert not Conversation.objects.filter(created_by=alice).exists()
    assert page_errors == {"errors": [], "dialogs": []}
