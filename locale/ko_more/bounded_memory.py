# ruff: noqa: E501
"""Korean for the steps of bounded memory (issue 31): a summary refused or failed."""

KO = {
    "A summary of %(count)s older message left out details, so what you said in it was kept instead, shortened": (
        "오래된 메시지 %(count)s개의 요약이 내용을 빠뜨려서, 대신 사용자가 한 말을 줄여서"
        " 남겼습니다"
    ),
    "Could not summarize %(count)s older message, so what you said in it was kept instead, shortened": (
        "오래된 메시지 %(count)s개를 요약하지 못해, 대신 사용자가 한 말을 줄여서 남겼습니다"
    ),
    "Kept what you said in %(count)s older message, shortened (summarizing is paused for a while after it failed)": (
        "오래된 메시지 %(count)s개에서 사용자가 한 말을 줄여서 남겼습니다 (요약이 실패해 잠시"
        " 쉬는 중)"
    ),
}  # fmt: skip
