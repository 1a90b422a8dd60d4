"""Reciprocal-rank fusion and keyword ranking, shared by documents, memories and recall."""

from __future__ import annotations

from text.ranking import fuse, query_concepts, rank


def test_what_both_rankings_find_beats_what_one_ranks_first():
    fused = fuse([["words-only", "both"], ["meaning-only", "both"]])
    assert max(fused, key=fused.__getitem__) == "both" == next(iter(fused))
    assert set(fused) == {"words-only", "both", "meaning-only"}


def test_a_tie_keeps_the_first_ranking_first():
    assert list(fuse([["a"], ["b"]])) == ["a", "b"]


def test_rare_words_weigh_more_and_korean_particles_do_not_hide_a_word():
    texts = [
        ("common", "The meeting is on Monday, the meeting room is booked."),
        ("rare", "회의록은 금요일까지 제출해야 합니다. The meeting notes."),
        ("none", "Nothing relevant here."),
    ]
    ranked = rank(query_concepts("회의록 meeting"), texts)
    keys = [r.key for r in ranked]
    assert keys[:1] == ["rare"] and "none" not in keys
