# ruff: noqa: E501
"""Korean for what every peer has (issue 58): PDF and CSV exports, the prompt library,
dictation, reading aloud, artifacts, images, side-by-side answers."""

KO = {
    "PDF, Markdown, text and CSV hold the branch you are on; JSON holds every branch and imports back.": "PDF, Markdown, 텍스트, CSV에는 지금 보는 갈래만, JSON에는 모든 갈래가 담기며 다시 가져올 수 있습니다.",
    "PDF (.pdf)": "PDF (.pdf)",
    "Spreadsheet (.csv)": "스프레드시트 (.csv)",
}
KO.update(
    {
        "Prompt published": "프롬프트 공개",
        "Prompt unpublished": "프롬프트 공개 중단",
        "Share the selected prompts with everyone": "선택한 프롬프트를 모두에게 공유",
        "Stop sharing the selected prompts": "선택한 프롬프트 공유 중단",
        "prompts": "프롬프트",
        "Command": "명령어",
        "Type / and this in the message box: a-z, 0-9 and -, e.g. summarize.": "메시지 입력창에 / 다음에 입력하는 이름입니다. a-z, 0-9, - 만 쓸 수 있습니다(예: summarize).",
        "Write {{name}} where a word should be asked for before it goes in the box.": "넣기 전에 물어볼 말이 들어갈 자리에 {{이름}}처럼 쓰세요.",
        "Everyone can use it; only you can change it.": "누구나 쓸 수 있고, 바꾸는 것은 나만 할 수 있습니다.",
        "text": "내용",
        "No such prompt.": "그런 프롬프트가 없습니다.",
        "This prompt is shared with you: only its owner can change it.": "공유받은 프롬프트입니다. 만든 사람만 바꿀 수 있습니다.",
        "Only staff can share a prompt with everyone.": "프롬프트를 모두에게 공유하는 것은 관리자만 할 수 있습니다.",
        "You have %(n)s prompts, the most one person may keep.": "프롬프트가 %(n)s개로, 한 사람이 둘 수 있는 최대입니다.",
        "You already have a prompt /%(command)s.": "이미 /%(command)s 프롬프트가 있습니다.",
        "Prompt saved.": "프롬프트를 저장했습니다.",
        "Prompt deleted.": "프롬프트를 삭제했습니다.",
        "Prompts": "프롬프트",
        "Saved prompts": "저장한 프롬프트",
        "Fill in the prompt": "프롬프트 채우기",
        "Insert": "넣기",
        "Edit prompt": "프롬프트 편집",
        "New prompt": "새 프롬프트",
        "Type / in the message box to use a prompt. Words in double braces, like {{name}}, are asked for first.": "메시지 입력창에 /를 입력하면 프롬프트를 쓸 수 있습니다. {{이름}}처럼 이중 중괄호 안의 말은 먼저 물어봅니다.",
        "Delete this prompt?": "이 프롬프트를 삭제할까요?",
        "No prompts yet. Save one you type often: a review checklist, a translation request, a weekly report.": "아직 프롬프트가 없습니다. 자주 입력하는 것을 저장해 두세요. 검토 목록, 번역 요청, 주간 보고처럼요.",
        "shared": "공유됨",
        "No prompt starts with that.": "그렇게 시작하는 프롬프트가 없습니다.",
        "No saved prompts yet: add them on the Prompts page.": "저장한 프롬프트가 아직 없습니다. ‘프롬프트’ 페이지에서 추가하세요.",
        "Fill in /%(command)s": "/%(command)s 채우기",
        "Mine": "내 것",
        "Mine · shared with everyone": "내 것 · 모두에게 공유됨",
        "Shared by staff": "관리자가 공유함",
    }
)
KO["%(count)s messages · exported %(time)s"] = "메시지 %(count)s개 · %(time)s에 내보냄"
KO.update(
    {
        "Your data": "내 데이터",
        "Export all conversations": "모든 대화 내보내기",
        "Every conversation (not temporary ones) as a Markdown file, with the files sent in it, in one zip. It is written in the background and kept for a day.": "모든 대화(임시 대화 제외)를 주고받은 파일과 함께 Markdown 파일로 묶어 zip 하나로 만듭니다. 뒤에서 만들어지며 하루 동안 보관됩니다.",
        "Recent exports": "최근 내보내기",
        "Download (%(n)s conversation)": "내려받기 (대화 %(n)s개)",
        "Download (%(n)s conversations)": "내려받기 (대화 %(n)s개)",
        "Import": "가져오기",
        "Conversations exported from this app, ChatGPT, Claude, Open WebUI or LibreChat can be imported on the All conversations page.": "이 앱, ChatGPT, Claude, Open WebUI, LibreChat에서 내보낸 대화는 ‘모든 대화’ 페이지에서 가져올 수 있습니다.",
        "This export is not ready.": "이 내보내기는 아직 준비되지 않았습니다.",
        "An export of your conversations is already being written.": "대화 내보내기가 이미 만들어지고 있습니다.",
        "No such export.": "그런 내보내기가 없습니다.",
        "The export was interrupted. Start it again.": "내보내기가 중단되었습니다. 다시 시작하세요.",
        "The export could not be written. Try again later.": "내보내기를 만들지 못했습니다. 나중에 다시 시도하세요.",
        "Waiting": "기다리는 중",
        "Writing": "만드는 중",
        "Ready": "준비됨",
        "Failed": "실패",
        "Markdown files in a zip": "zip으로 묶은 Markdown 파일",
        "Your export is ready.": "내보내기가 준비되었습니다.",
        "The export failed.": "내보내기에 실패했습니다.",
        "Writing your export…": "내보내기를 만드는 중…",
    }
)
