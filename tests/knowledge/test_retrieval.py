from __future__ import annotations

import pytest

from knowledge.hybrid import aretrieve
from knowledge.retrieval import retrieve
from knowledge.services import upload_document

from .recall import recall_at, upload_corpus

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(alice):
    return upload_corpus(alice)


def test_recall_at_3_on_the_handbook_is_at_least_90_percent(alice, corpus):
    recall, misses = recall_at(lambda q, k: retrieve(user_id=alice.id, query=q, k=k), corpus, k=3)
    assert recall >= 0.9, misses


def test_results_carry_title_section_snippet_score_and_text(alice, corpus):
    [best, *_] = retrieve(user_id=alice.id, query="How many vacation days per year?", k=4)
    assert best["document_title"] == "handbook en"
    assert best["section"] == "3.1 Annual leave"
    assert "25 days" in best["text"]
    assert 0 < len(best["snippet"]) <= 210 and "\n" not in best["snippet"]
    assert isinstance(best["score"], float) and best["score"] > 0


def test_results_are_best_first_and_at_most_k(alice, corpus):
    results = retrieve(user_id=alice.id, query="휴가", k=3)
    assert len(results) == 3
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)


def test_a_korean_word_is_found_with_its_particle_and_inside_a_compound(alice, corpus):
    particle = retrieve(user_id=alice.id, query="병가는", k=1)
    assert particle[0]["section"] == "제5조(병가)"
    inside = retrieve(user_id=alice.id, query="휴직", k=1)
    assert inside[0]["section"] == "제7조(육아휴직)"


def test_another_users_documents_are_never_retrieved(alice, bob, corpus):
    upload_document(user=bob, filename="bob.md", data=b"# Secret\n\nBob's vacation plan.")
    assert (
        retrieve(user_id=bob.id, query="annual leave vacation days", k=10)[0]["document_title"]
        == "bob"
    )
    assert all(
        r["document_title"] != "bob"
        for r in retrieve(user_id=alice.id, query="Bob vacation plan", k=10)
    )
    assert retrieve(user_id=None, query="vacation", k=3) == []


def test_a_query_of_only_stopwords_finds_nothing(alice, corpus):
    assert retrieve(user_id=alice.id, query="what is the", k=3) == []
    assert retrieve(user_id=alice.id, query="", k=3) == []


@pytest.mark.django_db(transaction=True)
async def test_aretrieve_is_the_async_twin(alice, close_db_threads):
    from asgiref.sync import sync_to_async

    documents = await sync_to_async(upload_corpus)(alice)
    results = await aretrieve(user_id=alice.id, query="사직서 제출", k=2)
    assert results[0]["document_id"] == documents["취업규칙.txt"]
    assert results[0]["section"] == "제14조(퇴직 절차)"
