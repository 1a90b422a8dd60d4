"""Cheap text rules: greetings, arithmetic, date questions, document and recall questions."""

from __future__ import annotations

import re

from text import sensitive

_GREETING = re.compile(
    r"^\s*(hi|hello|hey|good (morning|afternoon|evening)|안녕(하세요|하십니까)?|"
    r"반가워(요)?|반갑습니다|하이|헬로)\b[\s!.,~?😀-🙏]*$",
    re.IGNORECASE,
)
_EXPRESSION = re.compile(r"[-+(]*\d[\d\s.,+\-*/×÷^()%]*\d\)*|\d+")
_OPERATOR = re.compile(r"\d\s*\)*\s*[-+*/×÷^%]\s*\(*\s*-?\d")
# What may surround a bare expression and still count as "just arithmetic".
_ARITHMETIC_FILLER = re.compile(
    r"^\s*(what('s| is)|calculate|compute|how much is|계산(해줘|해 줘|해주세요|하면)?|"
    r"얼마(야|예요|인가요|지)?|은|는|=|\?|!|\.|\s)*$",
    re.IGNORECASE,
)
_DATETIME = re.compile(
    r"\b(what time|what day|what('s| is) the (date|time)|today'?s date|current (date|time)|"
    r"time is it)\b|몇 ?시|날짜|요일|오늘이? (며칠|몇 ?일)|지금 시간|현재 시간",
    re.IGNORECASE,
)
_DOCUMENT = re.compile(
    r"\b(documents?|files?|pdfs?|uploaded|my notes|knowledge base|according to)\b|"
    r"문서|자료|파일|업로드|첨부",
    re.IGNORECASE,
)
_RECALL = [
    re.compile(r"what did i (?:tell|say to|say) (?:you )?about (?P<topic>.+?)[?.!]*$", re.I),
    re.compile(r"(?:do you )?remember (?:what i said about )?(?P<topic>.+?)[?.!]*$", re.I),
    re.compile(r"what (?:is|was) my (?P<topic>.+?)[?.!]*$", re.I),
    re.compile(r"내가 (?P<topic>.+?)에 대해(?:서)? 뭐(?:라고)? (?:했|말했)"),
    re.compile(r"(?P<topic>.+?)[이가은는]? 뭐(?:라고)? (?:했|말했)"),
    re.compile(r"(?:내|제) (?P<topic>\S+?)[이가은는]? (?:뭐|무엇)(?:야|예요|이야|였지|지|인가요)"),
    re.compile(r"(?P<topic>.+?)[이가은는]? (?:언제|얼마|어디|누구)(?:라고|였)"),
]
# A lasting fact the user states about themselves, or asks to have remembered.
# (asked to be remembered, pattern): a sentence is tried against the requests first.
_FACT = [
    (True, re.compile(r"^(?:please )?remember(?: that)?[:,]? (?P<fact>[^?]{3,}?)[.!]*$", re.I)),
    # "…(이)라는 걸 기억해 줘": the fact is what comes before "라는 걸".
    (
        True,
        re.compile(
            r"^(?P<fact>[^?]{3,}?)(?:이?라는|다는)\s?(?:걸|것을?|거)\s?"
            r"기억해\s?(?:줘|주세요|둬|둬요|놔)[.!~]*$"
        ),
    ),
    (True, re.compile(r"^(?P<fact>[^?]{3,}?)[을를]? 기억해\s?(?:줘|주세요|둬|둬요|놔)[.!~]*$")),
    (False, re.compile(r"(?P<fact>\bmy (?:[\w'-]+ ){0,3}(?:is|are) [^?]+?)[.!]*$", re.I)),
    (
        False,
        re.compile(
            r"(?P<fact>\bi (?:live in|work (?:at|for|as)|am allergic to) [^?]+?)[.!]*$", re.I
        ),
    ),
    (False, re.compile(r"(?P<fact>(?:내|제|나의|저의) \S+(?: \S+)?[은는] [^?]+?)[.!~]*$")),
]
_FORGET = [
    re.compile(
        r"^(?:please )?forget (?:that |about |what i said about )?(?P<what>.+?)[.!]*$", re.I
    ),
    re.compile(r"^(?P<what>.+?)[은는을를]? (?:잊어|잊어버려|지워)\s?(?:줘|주세요|버려)?[.!~]*$"),
]
_PARTICLES = re.compile(r"(은|는|이|가|을|를|의|에|에서|에게|로|으로|와|과|도|만|라고|이라고)$")
_STOPWORDS = {"my", "the", "a", "an", "about", "you", "i", "me", "내", "제", "아까", "말한", "그"}


def is_greeting(text: str) -> bool:
    """Say whether `text` is only a greeting."""
    return bool(_GREETING.match(text.strip()))


# Digits joined by hyphens with no space, 9 digits or more: an identifier (a resident
# registration, phone or account number), not a subtraction.
_IDENTIFIER = re.compile(r"\d{2,6}(?:-\d{2,8})+")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")


def _is_identifier(candidate: str) -> bool:
    if _DATE.fullmatch(candidate):
        return True
    return bool(_IDENTIFIER.fullmatch(candidate)) and sum(c.isdigit() for c in candidate) >= 9


def find_arithmetic(text: str) -> str | None:
    """Return the arithmetic expression in `text`, if it has one with an operator; an
    identifier ("900101-1234567", "010-1234-5678") or sensitive information is none."""
    sensitive_spans = [(f.start, f.end) for f in sensitive.find(text)]
    candidates = [
        m.group().strip()
        for m in _EXPRESSION.finditer(text)
        if not any(m.start() < end and start < m.end() for start, end in sensitive_spans)
    ]
    with_operator = [c for c in candidates if _OPERATOR.search(c) and not _is_identifier(c)]
    return max(with_operator, key=len) if with_operator else None


def is_pure_arithmetic(text: str) -> bool:
    """Say whether `text` asks for nothing but a calculation."""
    expression = find_arithmetic(text)
    if expression is None:
        return False
    return bool(_ARITHMETIC_FILLER.match(text.replace(expression, " ")))


def asks_datetime(text: str) -> bool:
    """Say whether `text` asks for the current date or time."""
    return bool(_DATETIME.search(text))


def mentions_documents(text: str) -> bool:
    """Say whether `text` explicitly refers to the user's documents."""
    return bool(_DOCUMENT.search(text))


_ALL_REMEMBERED = [
    # "list everything I asked you to remember", "what do you remember about me"
    re.compile(
        r"\b(everything|all|list|what)\b.{0,60}\b(remember|memor(y|ies)|know about me)",
        re.I | re.S,
    ),
    re.compile(r"\b(remember|memor(y|ies))\b.{0,40}\b(everything|all)\b", re.I | re.S),
    # "기억해 달라고 한 거 다 말해 줘", "나에 대해 뭘 기억하고 있어?", "기억하는 거 전부"
    re.compile(
        r"기억.{0,30}(전부|모두|모든|목록|다 (말|알려|보여))|(전부|모두|모든).{0,30}기억"
        r"|(뭘|무엇을|뭐) 기억"
    ),
]


def asks_what_is_remembered(text: str) -> bool:
    """Whether `text` asks for the memories as a whole ("what do you remember about me?")."""
    return any(pattern.search(text) for pattern in _ALL_REMEMBERED)


def recall_topic(text: str) -> str | None:
    """Return X from "what did I tell you about X" / "내가 X에 대해 뭐라고 했지"."""
    for pattern in _RECALL:
        match = pattern.search(text.strip())
        if match and match.group("topic").strip():
            return match.group("topic").strip()
    return None


def stated_fact(text: str) -> str | None:
    """Return the sentence of `text` that states a lasting fact about the user, or asks to
    have something remembered ("my name is Mina", "내 이름은 민아야", "remember that …")."""
    found = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text.strip()):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        for explicit, pattern in _FACT:
            match = pattern.search(sentence)
            if match and match.group("fact").strip():
                found.append((not explicit, match.group("fact").strip()[:500]))
                break
    # What the user asked to have remembered comes before what they only said.
    return min(found, key=lambda pair: pair[0])[1] if found else None


def forget_request(text: str) -> str | None:
    """Return what the user asks to be forgotten ("forget my address", "주소는 잊어줘")."""
    for pattern in _FORGET:
        match = pattern.search(text.strip())
        if match and match.group("what").strip():
            return match.group("what").strip()
    return None


def keywords(text: str) -> list[str]:
    """Return the content words of `text` with Korean particles stripped."""
    words = []
    for raw in re.findall(r"[\w]+", text.lower()):
        word = _PARTICLES.sub("", raw) if len(raw) > 2 else raw
        if len(word) >= 2 and word not in _STOPWORDS:
            words.append(word)
    return words
