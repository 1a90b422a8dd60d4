"""The retrieval check on the Documents page shows exactly what the agent would get for a
question (the same passages, in the same order, with the path that found each), and saved
questions report whether their document is still found."""

from __future__ import annotations

import re

import pytest

from knowledge import checks
from knowledge.hybrid import retrieve
from knowledge.models import SavedQuestion
from knowledge.services import upload_document

pytestmark = pytest.mark.django_db(transaction=True)

LEAVE = (
    "# 연차 규정\n\n연차는 입사 1년 후부터 매년 15일이 주어집니다. "
    "남은 연차는 다음 해로 넘길 수 없습니다."
)
MEALS = "# Expenses\n\nMeals up to 30,000 won per person are reimbursed with a receipt."
OTHERS = [
    ("office", "# Office\n\nThe office closes at 6 pm on Fridays and opens at 9 am."),
    ("parking", "# 주차\n\n회사 주차장은 지하 2층이며 방문객은 안내 데스크에서 등록합니다."),
    ("laptops", "# Laptops\n\nA lost laptop is reported to IT within 24 hours."),
    ("wedding", "# 경조사\n\n본인 결혼 시 5일의 경조 휴가를 준다."),
]


@pytest.fixture
def documents(alice):
    return {
        name: upload_document(user=alice, filename=f"{name}.md", data=text.encode())
        for name, text in [("leave", LEAVE), ("meals", MEALS), *OTHERS]
    }


def test_the_check_shows_what_the_agent_would_get(alice, alice_client, documents):
    question = "How many vacation days do I get?"
    page = alice_client.get("/documents/", {"check": question}).content.decode()
    agent_gets = retrieve(user_id=alice.pk, query=question, k=checks.TOP_K)
    shown = re.findall(r'<li><a href="(/documents/[^"#]+#section-\d+)">', page)
    assert shown == [p["url"] for p in agent_gets] and shown
    # Each passage shows the paths that found it (here, by meaning: the question is in
    # English, the passages about leave in Korean).
    assert agent_gets[0]["document_title"] in ("leave", "wedding")
    items = page.split('<ol class="check-results">', 1)[1].split("</ol>", 1)[0].split("</li>")
    for passage, item in zip(agent_gets, items, strict=False):
        shown_paths = re.findall(r'<span class="chip">(\w+)</span>', item)
        names = {"keyword": "words", "dense": "meaning"}
        assert shown_paths == [names[p] for p in passage["found_by"]]


def test_saved_questions_show_their_hit_rate(alice, bob, alice_client, documents):
    save = {"question": "Meals limit with a receipt?", "document": documents["meals"].pk}
    assert alice_client.post("/documents/questions/", save).status_code == 302
    # Expecting the document ranked last for it: not in the first three, so "missed".
    ranked = retrieve(user_id=alice.pk, query=save["question"], k=20)
    last = ranked[-1]["document_id"]
    assert last not in [r["document_id"] for r in ranked[:3]]
    wrong = {"question": "Meals limit with a receipt?", "document": last}
    alice_client.post("/documents/questions/", wrong)
    page = alice_client.get("/documents/").content.decode()
    assert "Found in the first 3: 1 of 2 questions" in page
    assert "found at 1" in page and "missed" in page
    # Someone else's document cannot be the expected one; hostile input changes nothing.
    upload_document(user=bob, filename="bob.md", data=b"# Bob\n\nBob's notes.")
    bobs = bob.documents.get().pk
    for bad in (
        {"question": "x", "document": bobs},
        {"question": "x", "document": "not-a-uuid"},
        {"question": "a\x00b", "document": documents["meals"].pk},
        {"question": "q" * 501, "document": documents["meals"].pk},
        {"question": "   ", "document": documents["meals"].pk},
    ):
        alice_client.post("/documents/questions/", bad)
    assert SavedQuestion.objects.filter(owner=alice).count() == 2
    one = SavedQuestion.objects.filter(owner=alice).first()
    assert (
        alice_client.post("/documents/questions/", {"action": "delete", "id": "x"}).status_code
        == 302
    )
    alice_client.post("/documents/questions/", {"action": "delete", "id": one.pk})
    assert SavedQuestion.objects.filter(owner=alice).count() == 1


def test_a_nul_or_huge_question_is_answered_not_failed(alice_client, documents):
    assert alice_client.get("/documents/", {"check": "a\x00b"}).status_code == 200
    assert alice_client.get("/documents/", {"check": "연차 " * 5000}).status_code == 200
