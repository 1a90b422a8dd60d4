"""Say, for the person, why a tool failed: one sentence per failure step, in their language.

The offline model answers with these, and a model that repeats a failure's error text has
the repeat replaced by them (agent/tool_echo.py).
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from agent.steps import fill

# What a person is told when a tool fails, by the failure's step (agent/steps.py),
# then by tool: (English, Korean). Written for the person; `%(name)s` takes the step's params.
FAILURE_REPLIES: dict[str, tuple[str, str]] = {
    "memory.sensitive_id": (
        "I couldn't save that as a memory because it looks like an ID number: memories never"
        " hold ID, card or account numbers, or passwords.",
        "신분증 번호처럼 보여서 메모리에 저장하지 않았어요. 메모리에는 신분증·카드·계좌 번호나"
        " 비밀번호를 저장하지 않아요.",
    ),
    "memory.sensitive_financial": (
        "I couldn't save that as a memory because it looks like a card or bank account number:"
        " memories never hold ID, card or account numbers, or passwords.",
        "카드 번호나 계좌 번호처럼 보여서 메모리에 저장하지 않았어요. 메모리에는 신분증·카드·계좌"
        " 번호나 비밀번호를 저장하지 않아요.",
    ),
    "memory.sensitive_contact": (
        "I couldn't save that as a memory because it looks like a phone number or e-mail"
        " address. You can add it yourself on the memory page if you want it kept.",
        "전화번호나 이메일 주소처럼 보여서 메모리에 저장하지 않았어요. 꼭 남기고 싶으면 메모리"
        " 페이지에서 직접 추가할 수 있어요.",
    ),
    "memory.sensitive_secret": (
        "I couldn't save that as a memory because it looks like a password or secret key:"
        " memories never hold secrets.",
        "비밀번호나 비밀 키처럼 보여서 메모리에 저장하지 않았어요. 메모리에는 비밀 정보를 저장하지"
        " 않아요.",
    ),
    "memory.off": (
        "Memory is off, so I can't save or delete memories. You can turn it on in the settings.",
        "메모리가 꺼져 있어서 저장하거나 지울 수 없어요. 설정에서 켤 수 있어요.",
    ),
    "memory.too_long": (
        "That is too long to keep as one memory (at most %(limit)s characters).",
        "메모리 하나로 저장하기에는 너무 길어요 (최대 %(limit)s자).",
    ),
    "memory.full": (
        "I couldn't save that: you already have %(limit)s memories. Delete a few on the memory"
        " page first.",
        "메모리가 이미 %(limit)s개라서 저장하지 못했어요. 메모리 페이지에서 몇 개를 지워 주세요.",
    ),
    "memory.no_match": (
        "I couldn't find a saved memory like that, so nothing was deleted.",
        "그런 내용의 메모리를 찾지 못해서 아무것도 지우지 않았어요.",
    ),
    "calculator.division_by_zero": (
        "That divides by zero, so there is no result.",
        "0으로 나누는 계산이라 결과가 없어요.",
    ),
    "calculator.too_large": (
        "The result is too large for me to calculate.",
        "결과가 너무 커서 계산할 수 없어요.",
    ),
    "calculator.not_real": ("The result is not a real number.", "결과가 실수가 아니에요."),
    "calculator.too_long": (
        "That expression is too long for me to calculate.",
        "식이 너무 길어서 계산할 수 없어요.",
    ),
    "calculator.invalid": (
        "I couldn't read that as arithmetic.",
        "그 식은 계산할 수 있는 형태가 아니에요.",
    ),
    "clock.unknown_zone": (
        "I don't know the time zone %(zone)s.",
        "%(zone)s 시간대를 알 수 없어요.",
    ),
    "tool.remember.failed": (
        "I couldn't save that as a memory this time.",
        "이번에는 메모리에 저장하지 못했어요.",
    ),
    "tool.forget.failed": (
        "I couldn't delete that memory this time.",
        "이번에는 메모리를 지우지 못했어요.",
    ),
    "tool.calculator.failed": (
        "I couldn't work that out this time.",
        "이번에는 계산하지 못했어요.",
    ),
    "tool.get_current_datetime.failed": (
        "I couldn't read the clock this time.",
        "이번에는 시각을 확인하지 못했어요.",
    ),
}
FAILURE_FALLBACK = ("Sorry, that didn't work this time.", "죄송해요, 이번에는 처리하지 못했어요.")


def failure_reply(result: ToolMessage, language: str) -> str:
    """Say, for the person, why a tool failed (never the error text the model was given)."""
    failure = result.artifact if isinstance(result.artifact, dict) else {}
    english, korean = FAILURE_REPLIES.get(str(failure.get("code")), FAILURE_FALLBACK)
    return fill(korean if language == "ko" else english, failure.get("params") or {})
