"""Korean for PostgreSQL or Redis out of reach (the 503 page and answer, a reply whose memory failed)."""

KO = {
    "Unavailable": "사용할 수 없음",
    "Try again": "다시 시도",
    "%(service)s cannot be reached right now; try again in a few seconds.":
        "지금 %(service)s에 연결할 수 없습니다. 잠시 후 다시 시도하세요.",
}
