# ruff: noqa: E501
"""Korean for an import the list page refuses, said in people's words (static/js/list.js)."""

KO = {
    "This file cannot be imported: it is not an export this site can read, or part of it is damaged.": "이 파일은 가져올 수 없습니다: 이 사이트가 읽을 수 있는 내보내기 파일이 아니거나 일부가 손상되었습니다.",
    "This file is too large to import.": "파일이 너무 커서 가져올 수 없습니다.",
    "Too many requests at once; wait a moment and try again.": "요청이 한꺼번에 너무 많습니다. 잠시 후 다시 시도하세요.",
}  # fmt: skip
