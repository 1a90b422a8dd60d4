# ruff: noqa: E501
"""Korean for imports of other apps' exports: reasoning folded above a reply, and the
conversations of a file that could not be read."""

KO = {
    "Thought for %(n)s second": "%(n)s초 동안 생각함",
    "Thinking": "생각 과정",
    "These conversations of the file could not be read, so they were left out; nothing of them was stored:": "파일에 있는 다음 대화는 읽을 수 없어서 빠졌습니다. 이 대화의 내용은 하나도 저장되지 않았습니다:",
    "OK": "확인",
    "Untitled conversation (number %(n)s in the file)": "제목 없는 대화 (파일의 %(n)s번째)",
}  # fmt: skip
