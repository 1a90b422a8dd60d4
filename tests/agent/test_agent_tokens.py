"""Token estimation for Korean and English, and its calibration."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from agent.tokens import (
    estimate_message_tokens,
    estimate_tokens,
    update_calibration,
)


def test_english_is_about_one_and_a_third_tokens_per_word():
    text = "The quick brown fox jumps over the lazy dog while the cat watches from the window"
    words = len(text.split())
    assert words <= estimate_tokens(text) <= 1.6 * words


def test_korean_is_about_one_token_per_syllable():
    text = "안녕하세요 오늘 회의는 오후 세시에 시작합니다"
    syllables = sum(1 for ch in text if "가" <= ch <= "힣")
    assert syllables <= estimate_tokens(text) <= 1.3 * syllables
    # bytes/3 would say 1 per syllable too, but chars/4 would say a quarter: we are not that.
    assert estimate_tokens(text) > len(text) / 4


def test_digits_and_empty_text():
    assert estimate_tokens("") == 0
    assert estimate_tokens("123456789") == 3


def test_message_estimate_counts_framing_and_tool_calls():
    plain = estimate_message_tokens([HumanMessage("hi")])
    call = AIMessage(
        "", tool_calls=[{"name": "calculator", "args": {"expression": "1+1"}, "id": "a"}]
    )
    assert plain >= 5
    assert estimate_message_tokens([call]) > 5


def test_calibration_moves_toward_the_server_figure_and_stays_bounded():
    assert update_calibration(1.0, 100, 120) == 1.1
    assert update_calibration(1.0, 100, None) == 1.0
    assert update_calibration(1.0, 100, 10_000) == 3.0


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
@settings(max_examples=300, deadline=None)
def test_the_fast_estimate_counts_exactly_what_the_piece_by_piece_definition_does(text):
    from agent.tokens import _estimate, _estimate_by_pieces

    mixed = text + " 한국어 문장과 English words 12345 😀."
    assert _estimate(mixed) == _estimate_by_pieces(mixed)
