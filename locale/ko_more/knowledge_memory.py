"""Korean for where a memory came from (stated, inferred, added) and the memory filter."""

KO = {
    "You said it": "직접 말한 것",
    "Inferred by the assistant": "어시스턴트가 추론한 것",
    "Added by you": "직접 추가한 것",
    "Show memories": "메모리 보기",
    "All": "전체",
    "saved by the assistant from what you said": "사용자가 한 말을 어시스턴트가 저장함",
    "inferred by the assistant": "어시스턴트가 추론함",
}  # fmt: skip
