# ruff: noqa: E501
"""Korean for issue 55 (hard round 4): audited user deletes."""

KO = {
    "User deleted": "사용자 삭제",
}  # fmt: skip
