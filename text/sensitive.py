"""Find sensitive information in a message before it is stored (SPEC "Sensitive information").

One recognizer per kind. A regex only proposes a candidate; each candidate must then pass
the kind's own validation — a check digit (resident and alien registration numbers:
python-stdnum; card numbers: Luhn and an issuer prefix), a number plan (phone numbers:
Google's libphonenumber), or a context word nearby (bank accounts, passports) — so dates,
prices, order numbers and ordinary numbers do not trigger a warning. Pure Python, no
Django: the agent (the offline model) uses it too.

`find(text)` → sorted, non-overlapping `Finding(kind, start, end)`; offsets count
characters (code points) of `text`. `mask(text, findings)` replaces each span by `[kind]`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import phonenumbers
from stdnum import luhn
from stdnum.kr import rrn

KINDS = ("rrn", "arc", "phone", "card", "bank_account", "email", "passport", "secret")


@dataclass(frozen=True, order=True)
class Finding:
    start: int
    end: int
    kind: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "start": self.start, "end": self.end}


# Digits not glued to other digits or letters (an id inside a longer number is not one).
# Hangul may touch them: Korean writes particles onto a number ("1111이에요", "번호는4111").
_GLUED = r"[^\W가-힣ㄱ-ㆎ]"  # a word character that is not Hangul
_EDGE_L = r"(?<![.+-])(?<!" + _GLUED + ")"
_EDGE_R = r"(?!" + _GLUED + r"|-|\.\d)"

REGISTRATION = re.compile(_EDGE_L + r"(\d{6})(\s?-\s?|\s)?([1-8]\d{6})" + _EDGE_R)
# 13 digits in one run are as often a barcode (Korean EAN-13s start 880…): then a word
# nearby must say it is a registration number.
REGISTRATION_WORDS = re.compile(r"주민|등록번호|외국인|resident|registration|\bRRN\b", re.I)
CARD = re.compile(_EDGE_L + r"(\d(?:[ -]?\d){12,18})" + _EDGE_R)
PHONE = re.compile(
    r"(?<![\w+])(?:"
    r"\+\d{1,3}[ .-]?(?:\(?\d{1,4}\)?[ .-]?){2,4}\d{2,4}"  # international
    r"|0\d{1,2}[ .-]\d{3,4}[ .-]\d{4}"  # 010-1234-5678, 02-123-4567
    r"|01[016789]\d{7,8}"  # 01012345678
    r"|\(0\d{1,2}\)\s?\d{3,4}[ .-]\d{4}"  # (02) 123-4567
    r")(?![\w-])"
)
ACCOUNT = re.compile(_EDGE_L + r"(\d{2,6}-\d{2,6}-\d{2,8}(?:-\d{1,3})?|\d{10,14})" + _EDGE_R)
BANK_WORDS = re.compile(
    r"은행|계좌|입금|송금|이체|국민|신한|우리|하나|농협|기업|카카오뱅크|케이뱅크|토스뱅크|수협|"
    r"신협|새마을|우체국|씨티|SC제일|\bbank\b|\baccount\b|\bacct\b|\bIBAN\b|\bwire\b",
    re.IGNORECASE,
)
EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])"
)
PASSPORT = re.compile(r"(?<![\w-])([MSRODG]\d{8}|[MSRODG]\d{3}[A-Z]\d{4})(?![\w-])")
PASSPORT_WORDS = re.compile(r"여권|passport", re.IGNORECASE)
SECRETS = re.compile(
    r"(?<![\w-])(?:"
    r"AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|sk-(?:proj-|ant-api\d\d-)?[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic
    r"|gh[pousr]_[A-Za-z0-9]{36,}"  # GitHub
    r"|github_pat_[A-Za-z0-9_]{50,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}"  # Google
    r"|(?:sk|rk)_live_[0-9A-Za-z]{20,}"  # Stripe
    r"|glpat-[0-9A-Za-z_-]{20,}"  # GitLab
    r")(?![\w-])"
    r"|-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z]+ )?PRIVATE KEY-----|$)"
    r"|(?i:\b(?:password|passwd|pwd|secret|api[_-]?key|token)\b|비밀번호|암호)\s*[:=]\s*\S+"
)
CONTEXT_CHARS = 30  # how near a bank or passport word must be


def _registration(text: str) -> Iterator[Finding]:
    for match in REGISTRATION.finditer(text):
        digits = match.group(1) + match.group(3)
        if not match.group(2) and not _near(REGISTRATION_WORDS, text, match.start(), match.end()):
            continue
        if rrn.is_valid(digits):
            kind = "arc" if digits[6] in "5678" else "rrn"
            yield Finding(match.start(), match.end(), kind)


# Issuer prefixes and lengths of the cards people carry (Visa, Mastercard, Amex, Discover,
# JCB, UnionPay, Diners, Korean domestic): a Luhn-valid number that fits none of them is an
# ordinary number (a 13-digit tracking number starting 54 is no Mastercard; nor is one
# starting 4 a Visa: Visa's 13-digit cards are long gone, its numbers have 16 or 19 digits).
CARD_ISSUERS = (
    (re.compile(r"^4"), {16, 19}),
    (re.compile(r"^(?:5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720)"), {16}),
    (re.compile(r"^3[47]"), {15}),
    (re.compile(r"^(?:6011|65|64[4-9])"), {16, 17, 18, 19}),
    (re.compile(r"^35(?:2[89]|[3-8])"), {16, 17, 18, 19}),
    (re.compile(r"^62"), {16, 17, 18, 19}),
    (re.compile(r"^(?:30[0-5]|36|38)"), {14, 15, 16, 17, 18, 19}),
    (re.compile(r"^9"), {16}),
)


def _is_card_number(digits: str) -> bool:
    fits = any(p.match(digits) and len(digits) in lengths for p, lengths in CARD_ISSUERS)
    return fits and luhn.is_valid(digits)


def _card(text: str) -> Iterator[Finding]:
    for match in CARD.finditer(text):
        digits = re.sub(r"[ -]", "", match.group(1))
        groups = re.split(r"[ -]", match.group(1))
        # Written as a card is: one run, or groups of 4 (Amex 4-6-5).
        if len(groups) > 1 and not all(2 <= len(g) <= 6 for g in groups):
            continue
        if _is_card_number(digits):
            yield Finding(match.start(), match.end(), "card")


def _phone(text: str) -> Iterator[Finding]:
    for match in PHONE.finditer(text):
        raw = match.group(0)
        try:
            number = phonenumbers.parse(raw, None if raw.startswith("+") else "KR")
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            yield Finding(match.start(), match.end(), "phone")


def _near(words: re.Pattern[str], text: str, start: int, end: int) -> bool:
    return bool(words.search(text[max(0, start - CONTEXT_CHARS) : end + CONTEXT_CHARS]))


def _bank_account(text: str) -> Iterator[Finding]:
    for match in ACCOUNT.finditer(text):
        digits = match.group(1).replace("-", "")
        if 10 <= len(digits) <= 16 and _near(BANK_WORDS, text, match.start(), match.end()):
            yield Finding(match.start(), match.end(), "bank_account")


# Top-level domains reserved so that they never reach anyone (RFC 2606, RFC 6761): an
# address there is a placeholder in a handbook or a test, not a person's.
RESERVED_TLDS = {"example", "test", "invalid", "localhost", "local"}


def _email(text: str) -> Iterator[Finding]:
    for match in EMAIL.finditer(text):
        if match.group(0).rsplit(".", 1)[-1].lower() not in RESERVED_TLDS:
            yield Finding(match.start(), match.end(), "email")


def _passport(text: str) -> Iterator[Finding]:
    for match in PASSPORT.finditer(text):
        if _near(PASSPORT_WORDS, text, match.start(), match.end()):
            yield Finding(match.start(), match.end(), "passport")


def _secret(text: str) -> Iterator[Finding]:
    for match in SECRETS.finditer(text):
        yield Finding(match.start(), match.end(), "secret")


# In order of trust: where two overlap, the earlier kind wins (a registration number is
# not also a bank account; a card is not a phone number).
RECOGNIZERS: tuple[Callable[[str], Iterable[Finding]], ...] = (
    _secret,
    _registration,
    _card,
    _email,
    _passport,
    _phone,
    _bank_account,
)
MAX_TEXT = 200_000  # longer text is checked in its first MAX_TEXT characters


def find(text: str) -> list[Finding]:
    """Return the sensitive spans of `text`, in order, none overlapping."""
    text = text[:MAX_TEXT]
    taken: list[Finding] = []
    for recognizer in RECOGNIZERS:
        for found in recognizer(text):
            if not any(found.start < t.end and t.start < found.end for t in taken):
                taken.append(found)
    return sorted(taken)


def masked_kinds(text: str) -> list[str]:
    """Return the kinds whose mask (`[card]`, …) `text` holds: what was sensitive in it."""
    return [kind for kind in KINDS if f"[{kind}]" in text]


def mask(text: str, findings: Iterable[Finding]) -> str:
    """Replace each finding's span by `[kind]`."""
    out, last = [], 0
    for found in sorted(findings):
        out.append(text[last : found.start])
        out.append(f"[{found.kind}]")
        last = found.end
    out.append(text[last:])
    return "".join(out)
