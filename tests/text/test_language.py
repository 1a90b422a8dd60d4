"""One language detector for every part of the app."""

from __future__ import annotations

from text.language import detect_language


def test_korean_with_english_words_is_korean():
    assert detect_language(["안녕하세요, my friend 철수"]) == "ko"
    assert detect_language(["회의록 정리: deploy는 금요일, rollback 계획은 다음 주"]) == "ko"


def test_english_with_a_korean_name_is_english():
    assert detect_language(["hello there"]) == "en"
    assert (
        detect_language(["Please send the meeting notes to Kim Chul-soo (김철수) by Friday"])
        == "en"
    )


def test_no_letters_is_english():
    assert detect_language(["", "1234 + 5678 = ?"]) == "en"
