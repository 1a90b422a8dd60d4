from __future__ import annotations

import itertools

from knowledge.chunking import chunk_sections, parse_heading, split_sections
from text.words import concepts, index_terms, strip_ending


def test_markdown_headings_become_sections_with_number_and_title():
    text = "# Handbook\n\nIntro.\n\n## 3. Leave\n\n### 3.2 Sick leave\n\nCall in before ten."
    sections = split_sections(text)
    assert [s.heading for s in sections] == ["Handbook", "3. Leave", "3.2 Sick leave"]
    assert (sections[2].number, sections[2].title, sections[2].level) == ("3.2", "Sick leave", 3)
    assert text[sections[2].body_start : sections[2].end].strip() == "Call in before ten."


def test_korean_articles_are_headings_even_with_the_body_on_the_same_line():
    text = "취업규칙\n\n제1조(목적) 이 규칙은 목적을 정한다.\n\n제2조(적용 범위) 모두에게 적용한다."
    sections = split_sections(text)
    assert [s.heading for s in sections] == ["", "제1조(목적)", "제2조(적용 범위)"]
    assert sections[1].number == "제1조" and sections[1].title == "목적"
    assert text[sections[1].body_start : sections[1].end].strip() == "이 규칙은 목적을 정한다."


def test_numbered_plain_lines_are_headings_but_sentences_are_not():
    assert parse_heading("3.2 Leave policy")[0].number == "3.2"
    assert parse_heading("1. Submit the form within three days.") is None
    assert parse_heading("Article 7: Termination")[0].title == "Termination"


def test_long_sections_are_split_into_overlapping_chunks_within_the_section():
    body = " ".join(f"Sentence number {n} is here." for n in range(200))
    text = f"## 1. Long\n\n{body}\n\n## 2. Short\n\nTiny."
    sections = split_sections(text)
    chunks = chunk_sections(text, sections, size=400, overlap=80)
    long_chunks = [c for c in chunks if c.section.number == "1."[:1]]
    assert len(long_chunks) > 5
    assert all(len(c.text) <= 400 for c in chunks)
    for a, b in itertools.pairwise(long_chunks):
        assert b.start < a.end  # overlap
        assert text[b.start - 1].isspace()  # never starts mid-word
    assert chunks[-1].text == "Tiny." and chunks[-1].section.title == "Short"


def test_korean_words_lose_particles_and_index_their_suffixes():
    assert strip_ending("휴가는") == "휴가"
    assert strip_ending("첫해에도") == "첫해"
    assert strip_ending("회의") == "회의"
    assert "휴직은" in index_terms("육아휴직은 1년이다").split()
    assert [c.word for c in concepts("회사 휴가 정책이 뭐야?")] == ["회사", "휴가", "정책"]
