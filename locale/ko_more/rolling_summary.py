"""Korean for the rolling conversation summary (issue 59)."""

KO = {
    "summary covers up to": "요약이 다룬 마지막 메시지",
}
