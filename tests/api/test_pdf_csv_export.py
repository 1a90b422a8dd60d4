"""PDF and CSV exports (SPEC "Voice, artifacts, images, exports…"): the current branch,
Korean, code and math readable, fonts embedded; hostile content still makes a valid file."""

from __future__ import annotations

import csv
import io

import pytest
from pypdf import PdfReader

from conversations.models import Message
from tests.support import seed

from .conftest import make_conversation

pytestmark = pytest.mark.django_db

CODE = "def total(items):\n    return sum(items)  # 합계"
CONTENTS = [
    "부산 2박 3일 여행 계획을 세워줘",
    f"## 일정\n\n1. 해운대\n2. 감천문화마을\n\n```python\n{CODE}\n```\n\n"
    "Math: $E = mc^2$ and $$\\frac{a}{b}$$\n\n| 항목 | 비용 |\n|---|---|\n| 기차 | 12만원 |",
    '=HYPERLINK("https://evil.example")',
    'Line one,\nline "two"',
]


def _body(response) -> bytes:
    return b"".join(response)


def _with_an_abandoned_branch(user):
    """CONTENTS on the current branch, and an earlier answer to the first question left
    on a sibling branch."""
    conversation = make_conversation(user, title="부산 여행", contents=CONTENTS)
    first = Message.objects.get(conversation=conversation, sequence_number=1)
    seed.add_message(
        conversation_id=conversation.id,
        role="assistant",
        content="ABANDONED-BRANCH answer",
        parent=first,
        make_current=False,
    )
    return conversation


def _pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def test_pdf_holds_the_branch_in_korean_with_code_and_math_and_embeds_its_fonts(api, alice):
    conversation = _with_an_abandoned_branch(alice)
    response = api.get(f"/conversations/{conversation.id}/export", format="pdf")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].rstrip('"').endswith(".pdf")
    data = _body(response)
    assert data.startswith(b"%PDF-")
    text = _pdf_text(data)
    for words in ("부산 2박 3일 여행 계획을 세워줘", "감천문화마을", "12만원", "E = mc^2"):
        assert words in text
    assert "return sum(items)" in text and "합계" in text  # code, Hangul in it included
    assert "\\frac{a}{b}" in text  # math as its source, not half-drawn
    assert "ABANDONED-BRANCH" not in text
    fonts = {
        font.get_object()["/BaseFont"]
        for page in PdfReader(io.BytesIO(data)).pages
        for font in page["/Resources"]["/Font"].values()
    }
    assert any("NanumGothic" in name for name in fonts)
    assert any("NanumGothicCoding" in name for name in fonts)
    for page in PdfReader(io.BytesIO(data)).pages:  # every font is in the file, not named
        for font in page["/Resources"]["/Font"].values():
            descendant = font.get_object()["/DescendantFonts"][0].get_object()
            assert "/FontFile2" in descendant["/FontDescriptor"]


def test_csv_is_one_row_per_message_of_the_branch_and_formulas_stay_text(api, alice):
    conversation = _with_an_abandoned_branch(alice)
    response = api.get(f"/conversations/{conversation.id}/export", format="csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    raw = _body(response).decode("utf-8")
    assert raw.startswith("\ufeff")  # spreadsheets read the Korean as UTF-8
    rows = list(csv.reader(io.StringIO(raw[1:])))
    assert rows[0] == ["sequence_number", "role", "created_at", "model", "tokens", "content"]
    body = rows[1:]
    assert [r[0] for r in body] == ["1", "2", "3", "4"]
    assert [r[1] for r in body] == ["user", "assistant", "user", "assistant"]
    assert body[0][5] == CONTENTS[0]
    assert body[1][5] == CONTENTS[1] and body[1][3] == "offline" and body[1][4] == "11"
    assert body[2][5] == "'" + CONTENTS[2]  # a spreadsheet shows it, never runs it
    assert body[3][5] == CONTENTS[3]  # commas, quotes and line breaks come back whole
    assert body[0][2].endswith("Z") or "+00:00" in body[0][2]
    assert "ABANDONED-BRANCH" not in raw


@pytest.mark.parametrize(
    "content",
    [
        "x" * 20_000,  # one word longer than a page is wide
        "| " + " | ".join(f"c{i}" for i in range(40)) + " |\n|" + "---|" * 40,  # 40 columns
        "```\n" + "\n".join(f"line {i}" for i in range(3000)) + "\n```",  # code over pages
        "<script>alert(1)</script> [x](javascript:alert(1)) ![p](https://t.example/p.png)",
        "😀 👍🏽 \u202eevil\u202c زبان עברית",
    ],
    ids=["long-word", "wide-table", "long-code", "hostile-markup", "emoji-and-rtl"],
)
def test_a_pdf_of_hostile_content_is_still_a_readable_file(api, alice, content):
    conversation = make_conversation(alice, title="Edge", contents=["before", content, "after"])
    response = api.get(f"/conversations/{conversation.id}/export", format="pdf")
    assert response.status_code == 200
    text = _pdf_text(_body(response))
    assert "before" in text and "after" in text  # the messages around it are all there
    assert "javascript:" not in _body(
        api.get(f"/conversations/{conversation.id}/export", format="pdf")
    ).decode("latin-1")


def test_someone_elses_conversation_and_unknown_formats_are_refused(api, bob_api, alice):
    conversation = make_conversation(alice, contents=["mine"])
    assert bob_api.get(f"/conversations/{conversation.id}/export", format="pdf").status_code == 404
    assert api.get(f"/conversations/{conversation.id}/export", format="docx").status_code == 422


def test_the_pages_download_offers_pdf_and_csv(alice_client, alice):
    conversation = make_conversation(alice, title="Trip", contents=CONTENTS)
    page = alice_client.get(f"/conversations/{conversation.id}/").content.decode()
    assert "?format=pdf" in page and "?format=csv" in page
    response = alice_client.get(f"/conversations/{conversation.id}/export/?format=pdf")
    assert response.status_code == 200 and _body(response).startswith(b"%PDF-")
    bad = alice_client.get(f"/conversations/{conversation.id}/export/?format=docx")
    assert bad.status_code == 400
