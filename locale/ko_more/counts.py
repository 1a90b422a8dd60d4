"""Korean for token counts that are estimates (a message's, the conversation header's)."""

KO = {
    "≈ %(shown)s token": "토큰 약 %(shown)s개",
    "%(shown)s message · ≈ %(tokens)s tokens": "메시지 %(shown)s개 · 토큰 약 %(tokens)s개",
    "An estimate: no exact count was reported": "추정치입니다: 정확한 수가 보고되지 않았습니다",
}  # fmt: skip
