"""Korean for the attack and stranger sweep after issue 59: refusals in the reader's words
(core/schemas._SAID), no answer from the server, the list's search heading."""

KO = {
    "required": "필수 항목입니다",
    "not a field this takes": "받지 않는 항목입니다",
    "at most %(max_length)s characters": "최대 %(max_length)s자",
    "at least %(min_length)s characters": "최소 %(min_length)s자",
    "at most %(max_length)s items": "최대 %(max_length)s개",
    "at most %(le)s": "%(le)s 이하",
    "at least %(ge)s": "%(ge)s 이상",
    "less than %(lt)s": "%(lt)s 미만",
    "more than %(gt)s": "%(gt)s 초과",
    "not in the form this takes": "형식이 맞지 않습니다",
    "one of %(expected)s": "다음 중 하나: %(expected)s",
    "text expected": "글자여야 합니다",
    "a whole number expected": "정수여야 합니다",
    "a number expected": "숫자여야 합니다",
    "true or false expected": "true 또는 false여야 합니다",
    "an id expected": "ID여야 합니다",
    "a date and time expected (ISO 8601)": "날짜와 시각이어야 합니다(ISO 8601)",
    "a date expected (YYYY-MM-DD)": "날짜여야 합니다(YYYY-MM-DD)",
    "an object expected": "객체여야 합니다",
    "a list expected": "목록이어야 합니다",
    "not valid JSON": "올바른 JSON이 아닙니다",
    "Could not reach the server. Check your connection and try again.": (
        "서버에 연결하지 못했습니다. 연결을 확인하고 다시 시도하세요."
    ),
}
