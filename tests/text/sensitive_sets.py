"""The sensitive-information detector's evaluation sets (tests and bench/sensitive.py).

ORDINARY: sentences a user writes every day with numbers in them — dates, times, prices,
order and tracking numbers, versions, IPs, phone-like but unassigned numbers, Luhn-failing
16-digit runs, registration-shaped numbers with a wrong check digit. None is sensitive.
`valid_examples()`: generated examples of each kind with correct check digits.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from stdnum import luhn
from stdnum.kr import rrn

CORPUS = Path(__file__).parents[1] / "knowledge" / "corpus"

_TEMPLATES_KO = [
    "{d}에 회의가 있어요. 3시 {m}분까지 와 주세요.",
    "주문번호 {order} 배송 상태 알려줘.",
    "총 {price}원이고 부가세 {tax}원 포함이야.",
    "{y}년 {mo}월 {d2}일에 부산 가는 KTX 예매했어.",
    "운송장 번호는 {track}이야.",
    "버전 {v1}.{v2}.{v3}으로 올렸더니 빌드가 {n}초 걸렸어.",
    "서버 IP는 192.168.{a}.{b}이고 포트는 {port}이야.",
    "우리 팀 인원은 {n}명, 예산은 {price}원이야.",
    "학번이 {student}인데 수강신청이 안 돼.",
    "내선번호 {ext}로 전화 주세요.",
    "사번 {emp} 김민수입니다.",
    "{y}-{mo:02d}-{d2:02d} 기준 재고 {n}개.",
    "좌표는 37.{lat}, 127.{lon}이에요.",
    "제품 코드 {sku}는 품절입니다.",
    "{n}km 달리고 {m}분 걸렸어.",
    "비밀번호를 잊어버렸어, 어떻게 바꿔?",
    "암호화 방식이 궁금해.",
]
_TEMPLATES_EN = [
    "Order {order} shipped on {y}-{mo:02d}-{d2:02d}.",
    "The invoice total is ${price}.{cents}, due in {n} days.",
    "Meet me at {h}:{m:02d} on {d}.",
    "Tracking number {track} says it is in Incheon.",
    "We moved from version {v1}.{v2}.{v3} to {v1}.{v2}.{v4}.",
    "Ticket #{n} was closed after {m} minutes.",
    "Our office is at 221B Baker Street, floor {n}.",
    "The build id is {order} and the commit count {n}.",
    "Call extension {ext} or room {n}.",
    "Account settings were updated {n} times in {y}.",
    "Reset your password from the settings page.",
    "The API key rotation policy is 90 days.",
    "ISBN 978-{isbn} is out of print.",
    "Population {price} in {y}, growth {n}.{m}%.",
    "Serial number SN-{order} failed the test.",
]


def _fake_rrn(rng: random.Random, valid: bool) -> str:
    while True:
        body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
        body += f"{rng.choice('1234')}{rng.randint(0, 96):02d}{rng.randint(0, 999):03d}"
        digit = rrn.calc_check_digit(body)
        if valid:
            return f"{body[:6]}-{body[6:]}{digit}"
        wrong = str((int(digit) + rng.randint(1, 9)) % 10)
        return f"{body[:6]}-{body[6:]}{wrong}"


def _luhn_failing(rng: random.Random) -> str:
    while True:
        number = "4" + "".join(str(rng.randint(0, 9)) for _ in range(15))
        if not luhn.is_valid(number):
            return " ".join(number[i : i + 4] for i in range(0, 16, 4))


def ordinary_sentences(count: int = 300, seed: int = 3) -> list[str]:
    """Return `count` ordinary Korean and English sentences with numbers, plus the
    traps: registration-shaped numbers with a wrong check digit, Luhn-failing card-shaped
    numbers, unassigned phone-like numbers."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(count):
        template = rng.choice(_TEMPLATES_KO if i % 2 else _TEMPLATES_EN)
        out.append(
            template.format(
                d=f"{rng.randint(1, 12)}월 {rng.randint(1, 28)}일" if i % 2 else "Friday",
                m=rng.randint(0, 59),
                h=rng.randint(1, 12),
                order=rng.randint(10**9, 10**13),
                price=f"{rng.randint(1, 999):,}{rng.randint(0, 999):03d}",
                tax=rng.randint(100, 9999),
                y=rng.randint(1990, 2030),
                mo=rng.randint(1, 12),
                d2=rng.randint(1, 28),
                track=rng.randint(10**11, 10**13 - 1),
                v1=rng.randint(0, 9),
                v2=rng.randint(0, 20),
                v3=rng.randint(0, 99),
                v4=rng.randint(0, 99),
                n=rng.randint(1, 999),
                a=rng.randint(0, 255),
                b=rng.randint(0, 255),
                port=rng.randint(1000, 65535),
                student=rng.randint(2010, 2025) * 100000 + rng.randint(0, 99999),
                ext=rng.randint(1000, 9999),
                emp=f"A{rng.randint(10000, 99999)}",
                lat=rng.randint(1000, 9999),
                lon=rng.randint(1000, 9999),
                sku=f"KR-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                cents=f"{rng.randint(0, 99):02d}",
                isbn=f"89-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}-{rng.randint(0, 9)}",
            )
        )
    for _ in range(20):
        out.append(f"이 번호 {_fake_rrn(rng, valid=False)} 는 틀린 번호래요.")
        out.append(f"Test card {_luhn_failing(rng)} was declined.")
    out += [
        "전화번호 010-123-45 는 자리수가 모자라요.",
        "Call 555-0100 in the movie.",
        "번호는 000-0000-0000 이 아니야.",
        "The range is 1000-2000-3000 units.",
        "2024-05-01-0930 로그를 확인해.",
        "user@localhost is not an e-mail address",
        "M12345678 모델 부품이 도착했어.",
        "password 정책은 12자 이상이에요.",
    ]
    return out


def corpus_texts() -> list[str]:
    """The 40 test questions and the two test documents, paragraph by paragraph."""
    questions = [q["q"] for q in json.loads((CORPUS / "questions.json").read_text())]
    paragraphs = [
        p
        for name in ("handbook_en.md", "취업규칙.txt")
        for p in (CORPUS / name).read_text(encoding="utf-8").split("\n\n")
        if p.strip()
    ]
    return questions + paragraphs


def valid_examples(per_kind: int = 20, seed: int = 5) -> list[tuple[str, str, str]]:
    """Return (kind, the sensitive text, a sentence holding it), valid check digits."""
    rng = random.Random(seed)
    out: list[tuple[str, str, str]] = []
    for _ in range(per_kind):
        number = _fake_rrn(rng, valid=True)
        out.append(("rrn", number, f"제 주민등록번호는 {number} 입니다."))
        body = number.replace("-", "")
        alien = body[:6] + rng.choice("5678") + body[7:12]
        alien = f"{alien[:6]}-{alien[6:]}{rrn.calc_check_digit(alien)}"
        out.append(("arc", alien, f"외국인등록번호 {alien} 로 신청했어요."))
        prefix = rng.choice(["4", "51", "52", "53", "54", "55", "37", "6011", "35"])
        length = 15 if prefix == "37" else 16
        partial = prefix + "".join(str(rng.randint(0, 9)) for _ in range(length - len(prefix) - 1))
        card = partial + luhn.calc_check_digit(partial)
        shown = " ".join(card[i : i + 4] for i in range(0, len(card), 4))
        out.append(("card", shown, f"My card is {shown}, expiry 04/29."))
        mobile = f"010-{rng.randint(2000, 9999)}-{rng.randint(0, 9999):04d}"
        out.append(("phone", mobile, f"연락처는 {mobile} 입니다."))
        intl = f"+1 650 {rng.randint(200, 999)} {rng.randint(0, 9999):04d}"
        out.append(("phone", intl, f"Call me at {intl} tomorrow."))
        account = f"{rng.randint(100, 999)}-{rng.randint(10, 99)}-{rng.randint(100000, 999999)}"
        out.append(("bank_account", account, f"신한은행 {account} 로 보내 줘."))
        mail = f"user{rng.randint(1, 999)}@example{rng.randint(1, 9)}.co.kr"
        out.append(("email", mail, f"메일은 {mail} 로 주세요."))
        passport = f"M{rng.randint(10**7, 10**8 - 1)}"
        out.append(("passport", passport, f"여권번호: {passport}"))
        key = "sk-proj-" + "".join(
            rng.choice("abcdefghijkmnopqrstuvwxyzABCDEFGH0123456789") for _ in range(40)
        )
        out.append(("secret", key, f"OPENAI_API_KEY 는 {key} 이야"))
        aws = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
        out.append(("secret", aws, f"the access key {aws} leaked"))
    out.append(("secret", "password=hunter2", "db url has password=hunter2 in it"))
    out.append(
        (
            "secret",
            "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----",
            "key:\n-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----\nthanks",
        )
    )
    return out
