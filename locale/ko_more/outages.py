# ruff: noqa: E501
"""Korean for PostgreSQL or Redis out of reach (the 503 page and answer) and for a reply whose
memory (its checkpoints, the database) could not be reached."""

KO = {
    "Unavailable": "사용할 수 없음",
    "Try again": "다시 시도",
    "%(service)s cannot be reached right now; try again in a few seconds.": "지금 %(service)s에 연결할 수 없습니다. 잠시 후 다시 시도하세요.",
    "The conversation's memory could not be reached, so the answer stops here": "대화의 기억에 연결할 수 없어 답변이 여기서 멈췄습니다",
    "The conversation's memory could not be reached; try again in a moment.": "대화의 기억에 연결할 수 없습니다. 잠시 후 다시 시도하세요.",
}  # fmt: skip
