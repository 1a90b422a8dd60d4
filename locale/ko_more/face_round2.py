"""Korean for issue 56 (the face, round 2): a sidebar row's ⋯ menu, projects from the
sidebar, the reply shown as coming at once."""

KO = {
    "Options for %(title)s": "%(title)s 옵션",
    "New title": "새 제목",
    "Renamed.": "이름을 바꿨습니다.",
    "Conversation deleted.": "대화를 삭제했습니다.",
    "Project created.": "프로젝트를 만들었습니다.",
    "Create": "만들기",
    "New project": "새 프로젝트",
    "New project…": "새 프로젝트…",
    "Name of the new project": "새 프로젝트 이름",
    "Conversation": "대화",
    "Move": "옮기기",
    "Move to project": "프로젝트로 옮기기",
    "imported": "가져옴",
}  # fmt: skip
