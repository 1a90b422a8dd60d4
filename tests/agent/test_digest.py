"""The conversation summary's parser on what real models answer (agent/digest.py)."""

from __future__ import annotations

import pytest

from agent.digest import extractive_digest, parse_digest

ASKED_FORM = """## Main points
- Minsu plans a trip to Busan in May.
- The budget is 500,000 won.

## Decisions
- Take the KTX.

## Next actions
- Book a hotel near Haeundae.
"""
NO_HEADINGS = (
    "The user is planning a trip to Busan in May with a budget of 500,000 won. "
    "They chose the KTX and still need to book a hotel."
)
BOLD_KOREAN = """**주요 내용**
1. 5월 부산 여행 계획
2. 예산 50만 원

**결정 사항**
* KTX를 타기로 함

**다음 할 일**
* 해운대 근처 호텔 예약
"""
PREAMBLE_AND_ORDER = """Here is the summary you asked for:

### Next actions:
- Book a hotel
### Decisions
- (none)
### Main points
- Trip to Busan
"""
PLAIN_LABELS = """Main points: a trip to Busan in May.
Decisions:
- KTX
Next steps:
- hotel
"""


def test_the_asked_form_is_split_into_its_three_sections():
    digest = parse_digest(ASKED_FORM, "en")
    assert digest["main_points"] == [
        "Minsu plans a trip to Busan in May.",
        "The budget is 500,000 won.",
    ]
    assert digest["decisions"] == ["Take the KTX."]
    assert digest["next_actions"] == ["Book a hotel near Haeundae."]


def test_a_summary_without_headings_is_kept_as_main_points():
    digest = parse_digest(NO_HEADINGS, "en")
    assert digest["main_points"] == [NO_HEADINGS]
    assert "(none)" in digest["text"] and NO_HEADINGS in digest["text"]


def test_bold_headings_and_numbered_items_in_korean():
    digest = parse_digest(BOLD_KOREAN, "ko")
    assert digest["main_points"] == ["5월 부산 여행 계획", "예산 50만 원"]
    assert digest["decisions"] == ["KTX를 타기로 함"]
    assert digest["next_actions"] == ["해운대 근처 호텔 예약"]
    assert digest["text"].startswith("## 주요 내용\n- 5월 부산 여행 계획")


def test_sections_are_known_by_name_not_by_order():
    digest = parse_digest(PREAMBLE_AND_ORDER, "en")
    assert digest["next_actions"] == ["Book a hotel"]
    assert digest["decisions"] == []
    assert digest["main_points"] == ["Trip to Busan"]  # the preamble is a label, not a point


def test_plain_label_lines():
    digest = parse_digest(PLAIN_LABELS, "en")
    assert digest["main_points"] == ["Main points: a trip to Busan in May."]
    assert digest["decisions"] == ["KTX"]
    assert digest["next_actions"] == ["hotel"]


@pytest.mark.parametrize("empty", ["", "   \n\n", "## Main points\n- (none)"])
def test_an_empty_answer_gives_empty_sections(empty):
    digest = parse_digest(empty, "en")
    assert digest["main_points"] == digest["decisions"] == digest["next_actions"] == []


def test_the_extractive_digest_sorts_statements_into_sections():
    turns = [
        ("user", "I am planning a trip to Busan. We decided to take the KTX."),
        ("assistant", "Sounds good."),
        ("user", "I need to book a hotel by Friday."),
    ]
    digest = extractive_digest(turns, max_words=100)
    assert digest["main_points"] == ["I am planning a trip to Busan."]
    assert digest["decisions"] == ["We decided to take the KTX."]
    assert digest["next_actions"] == ["I need to book a hotel by Friday."]


def test_the_extractive_digest_rolls_on_from_the_summary_so_far():
    before = extractive_digest(
        [("user", "I am planning a trip to Busan. We decided to take the KTX.")], max_words=100
    )
    turns = [
        ("user", "We decided to take the KTX. We decided to stay in Haeundae."),
        ("user", "I need to book a hotel by Friday."),
    ]
    digest = extractive_digest(turns, max_words=100, previous=before["text"])
    assert digest["main_points"] == ["I am planning a trip to Busan."]  # kept from before
    # Said again: once, where it was said last; the new decision after it.
    assert digest["decisions"] == ["We decided to take the KTX.", "We decided to stay in Haeundae."]
    assert digest["next_actions"] == ["I need to book a hotel by Friday."]
