# ruff: noqa: E501
"""Korean for issue 55 (hard round 4): audited user deletes, budget reservations, and the
server's words that reached people in English."""

KO = {
    "User deleted": "사용자 삭제",
    "Newest messages (every message is in the Messages list)": "최근 메시지 (모든 메시지는 메시지 목록에 있습니다)",
    "Your replies still being written hold the rest of this month's token budget (%(used)s of %(limit)s tokens used). Try again when they finish.": "작성 중인 답변들이 이번 달 토큰 예산의 나머지를 잡고 있습니다(%(limit)s 토큰 중 %(used)s 토큰 사용). 답변이 끝나면 다시 시도하세요.",
    "Terminal chat": "터미널 채팅",
    "error: %(message)s": "오류: %(message)s",
    "No user named %(name)r (run `manage.py demo`).": "%(name)r 사용자가 없습니다(`manage.py demo`를 실행하세요).",
    "Binary frames are not supported; send JSON text.": "바이너리 프레임은 지원하지 않습니다. JSON 텍스트로 보내세요.",
    "A frame is at most %(n)s characters.": "프레임은 최대 %(n)s자입니다.",
    "The database is too busy to answer right now; try again in a few seconds.": "데이터베이스가 지금 너무 바빠서 답할 수 없습니다. 몇 초 뒤에 다시 시도하세요.",
}  # fmt: skip
