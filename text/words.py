"""Words for indexing and querying Korean and English text with the `simple` config.

`simple` neither stems nor strips Korean particles, so the index also carries every
suffix of a Korean word ('육아휴직은' → '휴직은', '직은'): a prefix query for '휴직'
then finds the word inside the compound. A query word loses its particle or ending
('휴가는' → '휴가', '신청하려면' → '신청') and becomes a prefix term ('휴가:*').
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations

from .language import HANGUL_SYLLABLE

WORD = re.compile(r"[0-9A-Za-z\u00c0-\u024f]+|[\uac00-\ud7a3]+|[\u3040-\u30ff\u4e00-\u9fff]+")
MAX_QUERY_CHARS = 500
MAX_CONCEPTS = 12
COMBINED_CONCEPTS = 5

ENGLISH_STOPWORDS = frozenset(
    """a about after all am an and any are as at be been before being but by can could did do
    does doing for from get got had has have how i if in into is it its let me my need of on
    or our should so some than that the their them then there these they this to up us was
    we were what when where which while who whom why will with would you your tell explain
    please know want happens happen much many per""".split()  # noqa: SIM905
)
# Question words and fillers that say nothing about which section answers.
KOREAN_STOPWORDS = frozenset(
    """뭐야 뭐 뭔가요 뭔지 무엇 무엇인가요 무엇인지 어떻게 어떤 언제 어디 어디서
    누구 누가 왜 몇 얼마 얼마나 알려줘 알려주세요 알려줄래 말해줘 궁금해
    궁금합니다 있어 있나요 있어요 있습니다 있는지 없어 없나요 돼 되나요 되는지
    돼요 해 해요 하나요 하는지 좀 제가 저는 저 나는 내가 나 우리 우리는 그럼
    그리고 혹시 경우 경우에 경우에는 때 때는 수 것 거 건가요 인가요 이야 야
    해야 하면 하려면 합니까 됩니까 입니까 가요 인지 라고 대해 대해서 관련
    관련해서""".split()  # noqa: SIM905
)
# Longest first: the first match is stripped, and only when two syllables or more remain.
KOREAN_ENDINGS = tuple(
    sorted(
        """은 는 이 가 을 를 에 의 로 으로 와 과 도 만 에서 에게 한테 께 까지
        부터 보다 처럼 이나 나 이랑 랑 하고 에는 에서는 으로는 로는 까지는
        부터는 이란 란 이라는 라는 이라면 이면 면 이야 야 이에요 예요 입니다
        인가요 인지 이죠 죠 요 하려면 하면 해야 하나요 하는 하는지 할 할까
        할까요 했나요 해요 되나요 되는 되면 돼요 받으려면 받나요 받을 받는 되려면
        려면 으려면 나요 은지 는지 인데 는데 들 들은 들이 들의 이고 고 해도
        이래 래 에요 을까 를까 가요 어요 아요 다 습니까 합니까 됩니까 한 님
        님은 님이 님의 해 돼 해도 돼도""".split(),  # noqa: SIM905
        key=len,
        reverse=True,
    )
)


# English words Korean writes as loanwords (외래어), both ways round: a Korean user says
# '프로젝트 코드명' and later asks for "the project code name". Keys are the stems that
# `concepts` produces (English: `_english_stem`; Korean: without particles). Only words of
# two syllables or more on the Korean side (a one-syllable prefix term matches too much).
_LOANWORD_PAIRS = """
    project:프로젝트 code:코드 server:서버 meeting:미팅 email:이메일 mail:메일
    data:데이터 design:디자인 file:파일 report:리포트 schedule:스케줄 manager:매니저
    client:클라이언트 program:프로그램 system:시스템 service:서비스 model:모델
    test:테스트 version:버전 update:업데이트 release:릴리스 marketing:마케팅 sale:세일즈
    invoice:인보이스 hotel:호텔 ticket:티켓 coffee:커피 menu:메뉴 recipe:레시피 pizza:피자
    computer:컴퓨터 laptop:랩톱 camera:카메라 game:게임 bus:버스 taxi:택시 password:패스워드
    website:웹사이트 database:데이터베이스 cloud:클라우드 network:네트워크 platform:플랫폼
    dashboard:대시보드 backlog:백로그 onboard:온보딩 sprint:스프린트 feedback:피드백
    interview:인터뷰 event:이벤트 online:온라인 offline:오프라인 mobile:모바일
"""


def _loanwords() -> dict[str, tuple[str, ...]]:
    table: dict[str, set[str]] = {}
    for pair in _LOANWORD_PAIRS.split():
        english, korean = pair.split(":")
        if len(korean) < 2:
            continue
        table.setdefault(english, set()).add(korean)
        table.setdefault(korean, set()).add(english)
    return {word: tuple(sorted(forms)) for word, forms in table.items()}


LOANWORDS = _loanwords()


@dataclass(frozen=True)
class Concept:
    """One query word and the forms that count as finding it."""

    word: str
    parts: tuple[str, ...] = ()  # pieces of a Korean compound, which count for less
    # The same word in the other script: an English loanword as Korean writes it, or back
    # ('project' ⇄ '프로젝트'); counts as the word itself.
    aliases: tuple[str, ...] = ()

    @property
    def forms(self) -> tuple[str, ...]:
        """Return every prefix form: the word, its aliases, then its parts."""
        return (self.word, *self.aliases, *self.parts)

    @property
    def word_forms(self) -> tuple[str, ...]:
        """Return the forms that find the word whole: itself and its aliases."""
        return (self.word, *self.aliases)


def words(text: str) -> list[str]:
    """Return the words of `text`, lower-cased."""
    return [w.lower() for w in WORD.findall(text)]


def is_hangul(word: str) -> bool:
    """Say whether `word` is Korean."""
    return bool(HANGUL_SYLLABLE.match(word))


def index_terms(text: str) -> str:
    """Return the extra index terms of `text`: the inner suffixes of its Korean words."""
    seen: set[str] = set()
    for word in words(text):
        if is_hangul(word) and len(word) >= 3:
            seen.update(word[i:] for i in range(1, len(word) - 1))
    return " ".join(sorted(seen))


def _particle_on_one_syllable(word: str) -> bool:
    # '집에서', '번까지': a one-syllable word would be a prefix term matching thousands.
    if len(word) < 2:
        return True
    return len(word) > 2 and any(
        word.endswith(ending) and len(word) - len(ending) == 1 for ending in KOREAN_ENDINGS
    )


def strip_ending(word: str) -> str:
    """Return a Korean word without its particles or verb ending ('첫해에도' → '첫해')."""
    for _ in range(2):  # particles stack: '에' + '도'
        for ending in KOREAN_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 2:
                word = word[: -len(ending)]
                break
        else:
            break
    return word


def concepts(query: str) -> list[Concept]:
    """Return what a query looks for: its content words, each with its matching forms."""
    found: dict[str, Concept] = {}
    for word in words(query[:MAX_QUERY_CHARS]):
        if word in ENGLISH_STOPWORDS or word in KOREAN_STOPWORDS:
            continue
        if is_hangul(word):
            stem = strip_ending(word)
            if stem in KOREAN_STOPWORDS or _particle_on_one_syllable(word):
                continue
            parts: set[str] = set()
            if len(stem) >= 4:  # a compound the document may write apart ('재택근무')
                parts.update(stem[i : i + 2] for i in range(0, len(stem) - 1, 2))
                parts.add(stem[-2:])
        else:
            if len(word) < 2 and not word.isdigit():
                continue
            stem, parts = _english_stem(word), set()
        aliases = LOANWORDS.get(stem) or LOANWORDS.get(word, ())
        found.setdefault(stem, Concept(word=stem, parts=tuple(sorted(parts)), aliases=aliases))
    return list(found.values())[:MAX_CONCEPTS]


def _english_stem(word: str) -> str:
    """Return a crude stem that prefix-matches the word's other forms ('policies' → 'polic')."""
    for suffix, shortest in (("ies", 4), ("ing", 4), ("ed", 4), ("es", 4), ("s", 3), ("y", 4)):
        if word.endswith(suffix) and len(word) - len(suffix) >= shortest:
            return word[: -len(suffix)]
    return word


def tsquery(items: list[Concept], *, at_least: int = 1) -> str:
    """Return a `to_tsquery('simple', …)` text matching chunks that hold `at_least` concepts.

    Every form is a prefix term ('휴가:*'); numbers match exactly ('1' must not find '10').
    `at_least=2` is an OR of pairs: far fewer rows than any-word when the words are common.
    Past COMBINED_CONCEPTS the longest concepts (the likely rarer words) are combined.
    """
    clauses = [_any_form(concept) for concept in items]
    if at_least < 2 or len(clauses) < 2:
        return " | ".join(clauses)
    if len(clauses) > COMBINED_CONCEPTS:
        longest = sorted(items, key=lambda c: len(c.word), reverse=True)[:COMBINED_CONCEPTS]
        clauses = [_any_form(concept) for concept in longest]
    groups = combinations(clauses, min(at_least, len(clauses)))
    return " | ".join("(" + " & ".join(f"({c})" for c in group) + ")" for group in groups)


def _any_form(concept: Concept) -> str:
    return " | ".join(_quote(form) + ("" if form.isdigit() else ":*") for form in concept.forms)


def _quote(form: str) -> str:
    return "'" + form.replace("'", "''").replace("\\", "\\\\") + "'"
