"""The sensitive-information detector: no finding in ordinary text, every valid example found."""

from __future__ import annotations

import pytest

from text.sensitive import find, mask
from transfers.management.commands.demo import DEMO_CONVERSATIONS

from .sensitive_sets import corpus_texts, ordinary_sentences, valid_examples


def test_no_finding_in_the_test_corpus_the_demo_or_ordinary_sentences():
    samples = [sample for language in DEMO_CONVERSATIONS.values() for sample in language]
    demo = [text for _, _, turns in samples for _, text in turns]
    texts = corpus_texts() + demo + ordinary_sentences()
    assert len(texts) > 400
    found = {text: [(f.kind, text[f.start : f.end]) for f in find(text)] for text in texts}
    assert {text: hits for text, hits in found.items() if hits} == {}


def test_every_valid_example_is_found_as_its_kind():
    examples = valid_examples()
    missed = []
    for kind, secret, sentence in examples:
        hits = [(f.kind, sentence[f.start : f.end]) for f in find(sentence)]
        if (kind, secret) not in hits:
            missed.append((kind, secret, hits))
    assert missed == []
    assert {kind for kind, _, _ in examples} == {
        "rrn",
        "arc",
        "card",
        "phone",
        "bank_account",
        "email",
        "passport",
        "secret",
    }


def test_mask_replaces_each_span_by_its_kind():
    text = "카드 4111 1111 1111 1111, 메일 a@b.co.kr 로."
    assert mask(text, find(text)) == "카드 [card], 메일 [email] 로."


@pytest.mark.parametrize(
    "text",
    ["900101-1234567", "010-1234-5678-9999-1111", "4111111111111111111111", "x" * 300_000],
)
def test_edges_do_not_crash(text):
    for found in find(text):
        assert 0 <= found.start < found.end <= len(text)


def test_offsets_count_characters_not_bytes():
    text = "😀 한국어 메일: kim@example.com"
    (found,) = find(text)
    assert text[found.start : found.end] == "kim@example.com"


@pytest.mark.parametrize(
    ("sentence", "kind", "number"),
    [
        ("제 카드 번호는 4111 1111 1111 1111이에요.", "card", "4111 1111 1111 1111"),
        ("주민번호는 900101-1234568이에요", "rrn", "900101-1234568"),
        ("카드번호4111111111111111로 결제해 줘", "card", "4111111111111111"),
    ],
)
def test_a_number_with_a_korean_particle_attached_is_found(sentence, kind, number):
    assert [(f.kind, sentence[f.start : f.end]) for f in find(sentence)] == [(kind, number)]
