"""An import the list page refuses is explained in people's words, in their language; the
API's message (the field at fault, a parser's error) is for developers and stays out."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conversations.models import Conversation

from .conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SAID = {
    "en-US": "This file cannot be imported: it is not an export this site can read,"
    " or part of it is damaged.",
    "ko-KR": "이 파일은 가져올 수 없습니다: 이 사이트가 읽을 수 있는 내보내기 파일이 아니거나"
    " 일부가 손상되었습니다.",
}
BROKEN = {
    "broken.json": b'{"format": "chatsite.conversation", "version": 1, "conversation": {',
    "dates.json": (
        b'{"format": "chatsite.conversation", "version": 1, "conversation": {"title": "t"},'
        b' "messages": [{"sequence_number": 1, "role": "user", "content": "a",'
        b' "created_at": "not a date"}]}'
    ),
}


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_a_refused_import_is_explained_to_people(new_context, alice, page_errors, locale):
    page = new_context(alice, locale=locale).new_page()
    watch(page, page_errors)
    page.goto("/conversations/")
    for name, data in BROKEN.items():
        page.set_input_files(
            "#import-file", files=[{"name": name, "mimeType": "application/json", "buffer": data}]
        )
        toast = page.locator(".toast.error, .toast").last
        expect(toast).to_have_text(SAID[locale], timeout=10_000)
        for developer_text in ("JSON", "created_at", "messages.0", "Input should", "line 1"):
            assert developer_text not in toast.inner_text()
    assert not Conversation.objects.filter(created_by=alice).exists()
    assert page_errors == {"errors": [], "dialogs": []}
