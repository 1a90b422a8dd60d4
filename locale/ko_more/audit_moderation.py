# ruff: noqa: E501
"""Korean for the audit log (audit/) and the moderation queue in the admin (issue 36)."""

KO = {
    # audit/
    "Audit log": "감사 로그", "audit entry": "감사 기록", "audit entries": "감사 기록",
    "Message deleted": "메시지 삭제됨", "Conversation deleted": "대화 삭제됨",
    "Report dismissed": "신고 기각됨", "Preset published": "프리셋 공개됨",
    "Preset unpublished": "프리셋 공개 취소됨", "Budget changed": "예산 변경됨",
    "Single sign-on linked": "통합 로그인 연결됨", "Single sign-on unlinked": "통합 로그인 연결 해제됨",
    "when": "시각", "actor id": "수행자 ID", "who": "수행자", "action": "작업",
    "target type": "대상 종류", "target id": "대상 ID", "target": "대상", "detail": "세부 정보",
    "Unknown filter.": "알 수 없는 필터입니다.", "Download CSV": "CSV 다운로드",
    # conversations/admin*.py and templates/admin/conversations/
    "%(count)d reported message": "신고된 메시지 %(count)d개",
    "Flagged by staff": "관리자가 표시함", "staff": "관리자",
    "Has reported messages": "신고된 메시지 있음",
    "Not a conversation id.": "대화 ID가 아닙니다.", "Reported messages": "신고된 메시지",
    "That report was already handled.": "이미 처리된 신고입니다.",
    "Report dismissed; the message stays.": "신고를 기각했습니다. 메시지는 그대로 남습니다.",
    "Delete the reported message?": "신고된 메시지를 삭제할까요?",
    "That message is already gone.": "이미 삭제된 메시지입니다.",
    "A reply is being written under this message; try again when it ends.":
        "이 메시지 아래에서 답변을 작성하는 중입니다. 끝난 뒤 다시 시도하세요.",
    "Message deleted.": "메시지를 삭제했습니다.",
    "Reason": "사유", "Reported by": "신고자", "Reported at": "신고 시각",
    "Conversation": "대화", "Reports in “%(title)s”.": "“%(title)s”의 신고입니다.",
    "Show all reports": "모든 신고 보기", "Dismiss report": "신고 기각",
    "No reported messages: nothing waits for a moderator.":
        "신고된 메시지가 없습니다. 검토를 기다리는 항목이 없습니다.",
    "Pages": "페이지", "Newer": "최신", "Older": "이전",
    "Page %(n)s of %(total)s": "%(total)s페이지 중 %(n)s페이지",
    "The message and the %(counter)s message under it on its branches will be deleted, for its owner too; the assistant forgets them.":
        "이 메시지와 그 아래 가지의 메시지 %(counter)s개가 작성자에게서도 삭제되고, 어시스턴트도 잊습니다.",
    "The message will be deleted, for its owner too; the assistant forgets it.":
        "이 메시지가 작성자에게서도 삭제되고, 어시스턴트도 잊습니다.",
    "Yes, delete it": "예, 삭제합니다", "No, take me back": "아니요, 돌아갑니다",
    "Home": "홈", "Moderation": "검토", "%(counter)s waiting": "%(counter)s건 대기 중",
}  # fmt: skip
