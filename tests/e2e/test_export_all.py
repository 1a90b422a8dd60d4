"""Settings → Your data: export every conversation in the browser and download the zip."""

from __future__ import annotations

import io
import zipfile

import pytest
from playwright.sync_api import expect

from tests.api.conftest import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_export_all_conversations_and_download_the_zip(new_context, alice, tmp_path):
    make_conversation(alice, title="부산 여행", contents=["계획", "좋아요"])
    make_conversation(alice, title="Lisbon", contents=["Plan", "Sure"])
    page = new_context(alice).new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto("/settings/data/")
    page.get_by_role("button", name="Export all conversations").click()
    link = page.get_by_role("link", name="Download (2 conversations)")
    expect(link).to_be_visible(timeout=20_000)
    with page.expect_download() as info:
        link.click()
    path = tmp_path / "export.zip"
    info.value.save_as(path)
    names = zipfile.ZipFile(io.BytesIO(path.read_bytes())).namelist()
    assert sorted(n.split("-")[0] for n in names) == ["Lisbon", "부산"]
    page.reload()
    expect(page.locator("#export-jobs")).to_contain_text("Download (2 conversations)")
    assert errors == []
