# ruff: noqa: E501
"""Korean for issue 55 (hard round 4): audited user deletes."""

KO = {
    "User deleted": "사용자 삭제",
    "Newest messages (every message is in the Messages list)": "최근 메시지 (모든 메시지는 메시지 목록에 있습니다)",
}  # fmt: skip
