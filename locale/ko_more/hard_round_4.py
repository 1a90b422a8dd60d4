# ruff: noqa: E501
"""Korean for issue 55 (hard round 4): audited user deletes, budget reservations, and the
server's words that reached people in English."""

KO = {
    "User deleted": "사용자 삭제",
    "Newest messages (every message is in the Messages list)": "최근 메시지 (모든 메시지는 메시지 목록에 있습니다)",
    "Your replies still being written hold the rest of this month's token budget (%(used)s of %(limit)s tokens used). Try again when they finish.": "작성 중인 답변들이 이번 달 토큰 예산의 나머지를 잡고 있습니다(%(limit)s 토큰 중 %(used)s 토큰 사용). 답변이 끝나면 다시 시도하세요.",
}  # fmt: skip
