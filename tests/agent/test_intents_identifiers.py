"""The offline model's calculator leaves identifiers alone: a resident registration
number, a phone number or a date is not a subtraction."""

from __future__ import annotations

import pytest

from agent.intents import find_arithmetic


@pytest.mark.parametrize(
    "text",
    [
        "900101-1234567",
        "내 주민번호 900101-1234567 기억해",
        "010-1234-5678",
        "2024-05-01",
        "02-123-4567",
    ],
)
def test_identifiers_are_not_arithmetic(text):
    assert find_arithmetic(text) is None


@pytest.mark.parametrize(
    ("text", "expression"), [("100-50", "100-50"), ("12 * 7 = ?", "12 * 7"), ("3+4는?", "3+4")]
)
def test_arithmetic_still_is(text, expression):
    assert find_arithmetic(text) == expression
