# ruff: noqa: E501
"""Korean for what every peer has (issue 58): PDF and CSV exports, the prompt library,
dictation, reading aloud, artifacts, images, side-by-side answers."""

KO = {
    "PDF, Markdown, text and CSV hold the branch you are on; JSON holds every branch and imports back.": "PDF, Markdown, 텍스트, CSV에는 지금 보는 갈래만, JSON에는 모든 갈래가 담기며 다시 가져올 수 있습니다.",
    "PDF (.pdf)": "PDF 문서 (.pdf)",
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
KO.update(
    {
        "Dictate": "받아쓰기",
        "Dictate: speak, then press again to stop": "받아쓰기: 말한 뒤 다시 눌러 멈춥니다",
        "Read aloud": "소리 내어 읽기",
        "A recording can be at most 25 MB.": "녹음은 최대 25MB까지 보낼 수 있습니다.",
        "language must be en or ko.": "language는 en 또는 ko여야 합니다.",
        "voice": "음성",
        "This is not a recording (WebM, Ogg, MP4, MP3, WAV or FLAC).": "녹음 파일이 아닙니다(WebM, Ogg, MP4, MP3, WAV, FLAC).",
        "This WAV file cannot be read.": "이 WAV 파일을 읽을 수 없습니다.",
        "A recording can be at most %(seconds)s seconds long.": "녹음은 최대 %(seconds)s초까지입니다.",
        "Dictation is not set up on this server.": "이 서버에는 받아쓰기가 설정되어 있지 않습니다.",
        "The model server cannot transcribe audio (it has no /audio/transcriptions).": "모델 서버가 음성을 글로 옮길 수 없습니다(/audio/transcriptions가 없습니다).",
        "The model server could not transcribe the recording.": "모델 서버가 녹음을 글로 옮기지 못했습니다.",
        "Reading aloud by the server is off: the browser reads instead.": "서버의 읽어 주기는 꺼져 있습니다. 브라우저가 대신 읽습니다.",
        "There are no words to read in this message.": "이 메시지에는 읽을 말이 없습니다.",
        "The model server cannot read aloud (it has no /audio/speech).": "모델 서버가 소리 내어 읽을 수 없습니다(/audio/speech가 없습니다).",
        "The model server could not read the message aloud.": "모델 서버가 메시지를 읽어 주지 못했습니다.",
        "A code block in %(language)s.": "%(language)s 코드 블록.",
        "A code block.": "코드 블록.",
        "A formula.": "수식.",
        "a formula": "수식",
        "Stop dictating": "받아쓰기 멈추기",
        "Transcribing…": "글로 옮기는 중…",
        "No words were heard.": "들린 말이 없습니다.",
        "Could not transcribe the recording.": "녹음을 글로 옮기지 못했습니다.",
        "This browser cannot record audio.": "이 브라우저는 녹음할 수 없습니다.",
        "Allow the microphone for this site to dictate.": "받아쓰려면 이 사이트에 마이크를 허용하세요.",
        "No microphone was found.": "마이크를 찾지 못했습니다.",
        "Recording stopped at %(n)s seconds, the longest allowed.": "녹음을 허용된 최대 길이인 %(n)s초에서 멈췄습니다.",
        "This browser cannot read aloud.": "이 브라우저는 소리 내어 읽을 수 없습니다.",
        "Stop reading": "읽기 멈추기",
    }
)
KO.update(
    {
        "Resize the preview": "미리보기 크기 조절",
        "Let the preview load from and send to the web": "미리보기가 웹에서 불러오고 웹으로 보낼 수 있게 합니다",
        "Allow network": "네트워크 허용",
        "Copy the code": "코드 복사",
        "Download": "내려받기",
        "Close the preview": "미리보기 닫기",
        "Preview": "미리보기",
        "Preview · %(kind)s": "미리보기 · %(kind)s",
        "%(n)s of %(total)s": "%(n)s / %(total)s",
    }
)
KO.update(
    {
        "Drawing a picture": "그림을 그리는 중",
        "Drew a picture": "그림을 그렸습니다",
        "Could not draw the picture": "그림을 그리지 못했습니다",
        "The model server cannot draw pictures": "모델 서버가 그림을 그릴 수 없습니다",
        "The picture could not be made this time": "이번에는 그림을 만들지 못했습니다",
        "Pictures": "그림",
        "Draws a picture from a description (counted against your budget).": "설명대로 그림을 그립니다(예산에 포함됩니다).",
    }
)
KO.update(
    {
        "Side by side with": "나란히 비교할 모델",
        "Ask a second model too: both answers side by side, keep the one you like": "두 번째 모델에게도 물어 두 답을 나란히 보고, 마음에 드는 답을 남깁니다",
        "Side by side: off": "나란히 비교: 끔",
        "Side by side with %(model)s": "%(model)s와 나란히 비교",
        "Keep this": "이 답 남기기",
        "Keep the answer of %(model)s": "%(model)s의 답 남기기",
        "Ask %(a)s and %(b)s side by side": "%(a)s와 %(b)s에게 나란히 묻기",
    }
)
KO.update(
    {
        "Add prompts from a file: an export of them, or the prompts.json of your data export": "파일에서 프롬프트 추가: 프롬프트를 내보낸 파일이나 데이터 내보내기의 prompts.json",
        "That file is not a prompts file.": "프롬프트 파일이 아닙니다.",
        "Added %(n)s prompt.": "프롬프트 %(n)s개를 추가했습니다.",
        "Added %(n)s prompts.": "프롬프트 %(n)s개를 추가했습니다.",
        "%(n)s skipped: you already have that command.": "%(n)s개는 이미 있는 명령어라 건너뛰었습니다.",
        "%(n)s skipped: you already have those commands.": "%(n)s개는 이미 있는 명령어라 건너뛰었습니다.",
        "You would have %(n)s prompts; one person may keep %(max)s.": "프롬프트가 %(n)s개가 됩니다. 한 사람이 둘 수 있는 최대는 %(max)s개입니다.",
    }
)
